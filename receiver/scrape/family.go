// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

package scrape // import "github.com/containerstats/containerstatsreceiver/receiver/scrape"

import (
	"go.opentelemetry.io/collector/scraper/scrapererror"

	"github.com/containerstats/containerstatsreceiver/internal/metadata"
)

// A family is one group of metrics the scrape reads and records together
// for an entity (the node, a pod, a container, a system container of the
// node): CPU time, memory, CFS
// throttling, thread states, PSI, pids, network, block I/O, hugetlb, file
// descriptors, filesystems, uptime, accelerators. Every family follows one
// protocol:
//
//   - Its constructor (a newFamily, listed in familyOrder) builds its
//     recorder table from the MetricsConfig (recorder), and derives from
//     the table's enabled rows, once at Start, what
//     it reads for each entity kind, and what each kind's points are; with
//     no metric of it enabled it is left out (nil). A file no enabled
//     metric needs is never opened.
//   - read reads what the entity's kind needs into the family's own result
//     for that entity (kept in the family: a scrape reads and records one
//     entity at a time), and readErr is the read's error. scrapeCgroup
//     reads every family before it records any, so a cgroup that vanishes
//     half-way (an error wrapping cgroupfs.ErrVanished from any family)
//     leaves nothing in the builder.
//   - record records the read through the family's recorder table
//     (MetricsBuilder methods as method expressions indexed by kind, as
//     kubeletstats' internal/metadata does), or reports the read's error as
//     a partial error counting the points it cost.
//   - points is what an entity of a kind costs when it vanishes, is not
//     read (a scrape stopped by its context) or sits below a directory
//     discovery could not list. A family whose count varies per entity
//     (devices, interfaces) counts what it recorded for the entity last
//     time (famState.pts).
//
// What a family keeps about an entity between scrapes lives in the
// entity's series, in the family's slot (stateOf); what it keeps across
// entities (buffers, log-once flags) lives in the family; beginScrape is
// called before the containers are read, for a family with per-scrape sums
// (thread states: a pod sums its containers); the others embed noSums.
// A family never sees the scraper: its constructor gets the env (env.go),
// each read the entity, whose pass is the scrape's scratch and whose hand
// carries what an earlier family read for a later one. Adding a family
// is a file with its type and recorder table and one line in familyOrder
// (CONTRIBUTING.md, "How to add a metric family").
type family interface {
	beginScrape()
	read(e *entity)
	readErr() error
	record(e *entity, errs *scrapererror.ScrapeErrors)
	points(k cgroupKind, st *series) int
}

// numKinds is the number of entity kinds: the node, pods, containers and
// the node's system containers (kindSystem). A family's per-kind arrays
// are [numKinds] with keyed elements, so a kind a family has no metric for
// is its zero value there: nothing read, nothing recorded, no points.
const numKinds = 4

// famState is one family's part of an entity's series.
type famState struct {
	// pts is the number of points the family recorded for the entity in
	// its last scrape, for families whose count varies per entity.
	pts int
	// state is the family's own state of the entity, nil until it keeps
	// one (stateOf).
	state any
}

// stateOf returns the family state of type T in slot of st, created on
// first use.
func stateOf[T any](st *series, slot int) *T {
	fs := &st.fam[slot]
	if p, ok := fs.state.(*T); ok {
		return p
	}
	p := new(T)
	fs.state = p
	return p
}

// lastPts is what the family in slot recorded for st last time; 0 for an
// entity never recorded (st nil).
func lastPts(st *series, slot int) int {
	if st == nil || slot >= len(st.fam) {
		return 0
	}
	return st.fam[slot].pts
}

// noSums is the beginScrape of a family without per-scrape sums.
type noSums struct{}

func (noSums) beginScrape() {}

// newFamily builds a family from the env and the enabled metrics, with its
// slot in the series' family state; nil when nothing of it is enabled.
type newFamily func(v *env, m *metadata.MetricsConfig, slot int) family

// familyOrder is every family in the order they read: a family that hands
// a value to another (handoff, env.go) comes before it.
var familyOrder = [...]newFamily{
	newCPUFamily,
	newMemoryFamily,
	newMemoryPeakFamily,
	newBandwidthFamily,
	newTasksFamily,
	newPSIFamily,
	newPidsFamily,
	newNetworkFamily,
	newBlkioFamily,
	newHugetlbFamily,
	newFDFamily,
	newFilesystemFamily,
	newUptimeFamily,
	newAcceleratorFamily,
	newEventsFamily, // after memory: reuses its OOM kill read
}

// newFamilies builds the scraper's families from the enabled metrics, in
// familyOrder. Families with nothing enabled are left out. Called once, in
// Start.
func newFamilies(v *env, m *metadata.MetricsConfig) []family {
	var fs []family
	for _, mk := range familyOrder {
		if f := mk(v, m, len(fs)); f != nil {
			fs = append(fs, f)
		}
	}
	return fs
}

// entityPoints is every point an entity of kind k with series st (nil:
// never scraped) would have had: what it costs when it vanishes or is not
// read.
func (s *Scraper) entityPoints(k cgroupKind, st *series) int {
	n := 0
	for _, f := range s.families {
		n += f.points(k, st)
	}
	return n
}

func count(bs ...bool) int {
	n := 0
	for _, b := range bs {
		if b {
			n++
		}
	}
	return n
}

// recorder is one row of a family's recorder table: the MetricsBuilder
// method that records a metric of an entity kind (a method expression)
// and whether that metric is enabled, its generated MetricsConfig's
// Enabled. A family's table is a function of the MetricsConfig, called once
// at Start, whose rows name each metric on one line, its config and its
// method (rec(m.X.Enabled, mbT.RecordXDataPoint)): a family names its
// metrics there only. A kind without the metric has the zero recorder
// (off, nothing to call). TestRecorderTables holds every row's config to
// its method.
type recorder[F any] struct {
	on     bool
	record F
}

// rec is a recorder table's row.
func rec[F any](on bool, record F) recorder[F] { return recorder[F]{on: on, record: record} }

// mbT is the MetricsBuilder as a method receiver: the recorder tables hold
// its methods as method expressions, indexed by entity kind, the way
// kubeletstats' internal/metadata/metrics.go does: no binding per scraper,
// no allocation per call.
type mbT = *metadata.MetricsBuilder
