// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

//go:build linux

package kubetest

import (
	"fmt"
	"reflect"
	"time"
)

// RecordUID is the log record attribute that names an event
// (semantic conventions: log.record.uid; docs/logs.md, "Delivery").
const RecordUID = "log.record.uid"

// Event is one log record as a collector's file exporter wrote it.
type Event struct {
	Name string         // EventName
	Res  map[string]any // resource attributes
	Attr map[string]any // record attributes
	At   time.Time      // Timestamp
	Sev  string         // SeverityText
	Body string
}

// UID is the event's log.record.uid; "" when it has none.
func (e Event) UID() string {
	s, _ := e.Attr[RecordUID].(string)
	return s
}

// DistinctEvents drops the copies of a record: records that have one
// log.record.uid and are equal in every other field (name, resource,
// attributes, timestamp, severity, body) are one event that was delivered
// more than once. OTLP exporters deliver at least once: a batch the
// gateway took whose answer the node did not get (a timeout, a restart)
// is sent again, from the persistent queue too. copies counts the dropped
// records.
//
// A second detection of one event is an error: two records with one UID
// that differ (the second detection has its scrape's own timestamp).
// So is a record without a UID. A second detection under another UID is
// two distinct events, which the caller's count of events finds.
func DistinctEvents(evs []Event) (distinct []Event, copies int, err error) {
	first := map[string]int{} // UID -> index in distinct
	for _, e := range evs {
		uid := e.UID()
		if uid == "" {
			return nil, 0, fmt.Errorf("a %s record without %s: resource %v, attributes %v", e.Name, RecordUID, e.Res, e.Attr)
		}
		i, seen := first[uid]
		if !seen {
			first[uid] = len(distinct)
			distinct = append(distinct, e)
			continue
		}
		if d := distinct[i]; !reflect.DeepEqual(d, e) {
			return nil, 0, fmt.Errorf("one event detected twice: two %s records with %s %s differ:\n  %+v\n  %+v", e.Name, RecordUID, uid, d, e)
		}
		copies++
	}
	return distinct, copies, nil
}
