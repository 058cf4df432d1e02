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

// DistinctEvents drops the copies of a record that a resent export
// request made. reqs is the records grouped by the OTLP export request in
// which they arrived, in order (the gateway's file exporter writes one line
// per request). OTLP exporters deliver at least once: a request the
// gateway took whose answer the node did not get (a timeout, a restart) is
// sent again, from the persistent queue too, and arrives whole again: a
// request whose records were all seen before and that is equal, record for
// record, to an earlier request is a resend, and its records are copies
// (counted in copies). A resend is a whole request again; a copy anywhere
// else is the product emitting one record twice, and an error: two
// records with one log.record.uid in one request (equal or not), or a
// request that repeats some earlier records but is not an earlier request
// again.
//
// A second detection of one event is an error: two records with one UID
// that differ (the second detection has its scrape's own timestamp).
// So is a record without a UID. A second detection under another UID is
// two distinct events, which the caller's count of events finds.
func DistinctEvents(reqs [][]Event) (distinct []Event, copies int, err error) {
	first := map[string]int{} // UID -> index in distinct
	for n, req := range reqs {
		inReq := map[string]bool{}
		repeated := 0
		for _, e := range req {
			uid := e.UID()
			if uid == "" {
				return nil, 0, fmt.Errorf("a %s record without %s: resource %v, attributes %v", e.Name, RecordUID, e.Res, e.Attr)
			}
			if inReq[uid] {
				return nil, 0, fmt.Errorf("one record twice in one export request (request %d): two %s records with %s %s", n, e.Name, RecordUID, uid)
			}
			inReq[uid] = true
			i, seen := first[uid]
			if !seen {
				continue
			}
			if d := distinct[i]; !reflect.DeepEqual(d, e) {
				return nil, 0, fmt.Errorf("one event detected twice: two %s records with %s %s differ:\n  %+v\n  %+v", e.Name, RecordUID, uid, d, e)
			}
			repeated++
		}
		switch {
		case repeated == 0:
			for _, e := range req {
				first[e.UID()] = len(distinct)
				distinct = append(distinct, e)
			}
		case repeated == len(req) && resend(req, reqs[:n]):
			copies += repeated
		default:
			return nil, 0, fmt.Errorf("export request %d repeats %d of its %d records but is no earlier request sent again: a record emitted twice", n, repeated, len(req))
		}
	}
	return distinct, copies, nil
}

// resend reports whether req is equal to one of the earlier requests.
func resend(req []Event, earlier [][]Event) bool {
	for _, e := range earlier {
		if reflect.DeepEqual(e, req) {
			return true
		}
	}
	return false
}
