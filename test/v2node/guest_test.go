// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

//go:build linux && v2guest

package v2node

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/receiver/receivertest"
	"go.uber.org/zap"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/containerstats/containerstatsreceiver/internal/cri"
	"github.com/containerstats/containerstatsreceiver/internal/fsstats"
	"github.com/containerstats/containerstatsreceiver/internal/identity"
	"github.com/containerstats/containerstatsreceiver/internal/identity/containerd"
	"github.com/containerstats/containerstatsreceiver/internal/metadata"
	nodestate "github.com/containerstats/containerstatsreceiver/internal/node"
	"github.com/containerstats/containerstatsreceiver/internal/testing/cgrouptest"
	"github.com/containerstats/containerstatsreceiver/internal/testing/containerdtest"
	"github.com/containerstats/containerstatsreceiver/internal/testing/machine"
	"github.com/containerstats/containerstatsreceiver/receiver/scrape"
)

// The guest's side (build tag v2guest): these tests run inside the vmnode
// guest, as root, on its real cgroup v2 tree, started by host_test.go.

const (
	cgRoot   = "/sys/fs/cgroup"
	nodeName = "v2node"
	// The guest's pod network: a bridge of the CNI bridge plugin.
	bridge, subnet, gateway = "cstest1", "10.88.218.0/24", "10.88.218.1"
)

// Results is the guest's directory for what the host reads back.
func results() string { return os.Getenv("VMNODE_RESULTS") }

func TestMain(m *testing.M) {
	if os.Getenv("VMNODE_GUEST") != "1" {
		fmt.Fprintln(os.Stderr, "v2node: the v2guest tests run only inside the vmnode guest (make v2-test boots it)")
		os.Exit(2)
	}
	if _, err := os.Stat(filepath.Join(cgRoot, "cgroup.controllers")); err != nil {
		fmt.Fprintln(os.Stderr, "v2node: /sys/fs/cgroup is not a cgroup v2 tree")
		os.Exit(2)
	}
	os.Exit(m.Run())
}

// node is the guest as one Kubernetes node would have it: containerd with
// its CRI plugin on runc's systemd cgroup driver, and our scraper on the
// node's root with identity from CRI and containerd (the sockets
// deploy/config.yaml names, here containerd's private one).
type node struct {
	ctrd *containerdtest.Containerd
	ids  *identity.Cache
	s    *scrape.Scraper
}

// allMetrics is the default metric set plus the optional ones a v2 node
// has files for (huge pages, memory.peak).
func allMetrics() metadata.MetricsBuilderConfig {
	mbc := metadata.NewDefaultMetricsBuilderConfig()
	mbc.Metrics.ContainerMemoryHugetlbUsage.Enabled = true
	mbc.Metrics.ContainerMemoryHugetlbLimit.Enabled = true
	mbc.Metrics.K8sPodMemoryHugetlbUsage.Enabled = true
	mbc.Metrics.K8sPodMemoryHugetlbLimit.Enabled = true
	mbc.Metrics.ContainerMemoryPeak.Enabled = true
	mbc.Metrics.K8sPodMemoryPeak.Enabled = true
	return mbc
}

func startNode(t *testing.T) *node {
	t.Helper()
	ctrd := containerdtest.StartWith(t, containerdtest.Options{
		BinDir: containerdtest.DefaultBinDir(), Systemd: true,
		ImageFiles: map[string]string{"bin/workload": os.Getenv("WORKLOAD_BIN")},
		Bridge:     bridge, Subnet: subnet, Gateway: gateway,
	})
	n := &node{ctrd: ctrd}
	n.ids = newIdentity(t, ctrd.Socket)
	n.s = newScraper(t, n.ids, allMetrics(), nil)
	return n
}

// newIdentity resolves containers the way the receiver does with
// deploy/config.yaml's runtime section (runtime.cri_endpoint and
// runtime.containerd_endpoint set, every other key at its default).
func newIdentity(t *testing.T, socket string) *identity.Cache {
	t.Helper()
	return newIdentityWith(t, socket, identity.CacheConfig{})
}

// newIdentityWith is newIdentity with the cache's refresh settings of cfg.
func newIdentityWith(t *testing.T, socket string, cfg identity.CacheConfig) *identity.Cache {
	t.Helper()
	cc, err := cri.Dial(socket)
	require.NoError(t, err)
	c := cri.NewResolver(cc)
	d, err := containerd.New(socket, []string{"k8s.io", "moby"}, nil)
	require.NoError(t, err)
	cfg.Resolvers, cfg.PodLogs, cfg.Logger = []identity.Resolver{c, d}, identity.NewPodLogs("/"), zap.NewNop()
	ids := identity.NewCache(cfg)
	require.NoError(t, ids.Start(context.Background()))
	t.Cleanup(func() {
		_ = ids.Shutdown(context.Background())
		_ = c.Close()
		_ = d.Close()
	})
	return ids
}

// newScraper is a scraper of the guest's root; ids nil: identity from the
// cgroup path only. trace, when set, sees every file a scrape opens.
func newScraper(t *testing.T, ids *identity.Cache, mbc metadata.MetricsBuilderConfig, trace func(string)) *scrape.Scraper {
	t.Helper()
	o := scrape.Options{Host: guestHost(), NodeName: nodeName, MetricsBuilderConfig: mbc, TraceRead: trace}
	if ids != nil {
		o.Identity = shared{ids}
	}
	s := scrape.New(receivertest.NewNopSettings(metadata.Type), o)
	require.NoError(t, s.Start(context.Background(), nil))
	t.Cleanup(func() { require.NoError(t, s.Shutdown(context.Background())) })
	return s
}

// newScraperFS is newScraper with allMetrics and the background filesystem
// collection asking the CRI at socket every 10 s, as the receiver's
// filesystem section does (filesystemConfig) with a shorter interval.
func newScraperFS(t *testing.T, ids *identity.Cache, socket string) *scrape.Scraper {
	t.Helper()
	mbc := allMetrics()
	fs := scrape.NewFilesystem(&mbc.Metrics, fsstats.Config{
		Root: "/", Interval: 10 * time.Second, Timeout: 10 * time.Second,
		Logger: zap.NewNop(), Connect: func() (fsstats.Source, error) {
			cl, err := cri.Dial(socket)
			if err != nil {
				return nil, err
			}
			return cri.NewFilesystemSource(cl), nil
		},
	})
	o := scrape.Options{Host: guestHost(), NodeName: nodeName, MetricsBuilderConfig: mbc, Identity: shared{ids}, Filesystem: fs}
	s := scrape.New(receivertest.NewNopSettings(metadata.Type), o)
	require.NoError(t, s.Start(context.Background(), nil))
	t.Cleanup(func() { require.NoError(t, s.Shutdown(context.Background())) })
	return s
}

// guestHost is the host handle of the guest's root, no runtime socket.
func guestHost() *nodestate.Host { return nodestate.NewHost(nodestate.HostConfig{Root: "/"}, nil) }

// shared lends the node's identity cache to a scraper without its Start
// and Shutdown (the scraper starts and stops its identity: here those do
// nothing): several scrapers of one test use the one cache newIdentity
// started. No listing (no scraper of these tests detects events).
type shared struct{ c *identity.Cache }

func (s shared) Prepare(ctx context.Context, ids []string) { s.c.Prepare(ctx, ids) }
func (s shared) Container(id, podUID string) (identity.Container, bool) {
	return s.c.Container(id, podUID)
}
func (s shared) Pod(uid string) (identity.Pod, bool) { return s.c.Pod(uid) }
func (s shared) IsSandbox(id string) bool            { return s.c.IsSandbox(id) }
func (s shared) Pending(id string) bool              { return s.c.Pending(id) }
func (s shared) Instances() []identity.Container     { return nil }
func (s shared) Start(context.Context) error         { return nil }
func (s shared) Shutdown(context.Context) error      { return nil }

// ctr is a running container of a pod of ours.
type ctr struct {
	pod *containerdtest.Pod
	ID  string
	Dir string // its cgroup directory
}

func (c *ctr) PodDir() string { return filepath.Join(cgRoot, c.pod.Parent) }

// run starts a pod with one container and waits until the container's
// cgroup (the systemd scope runc made) holds a process.
func (n *node) run(t *testing.T, name, qos string, spec containerdtest.ContainerSpec, network bool) *ctr { //nolint:unparam // the call names the QoS class its pod runs in
	t.Helper()
	var p *containerdtest.Pod
	if network {
		p = n.ctrd.RunPodNetwork(t, name, "v2", qos, nil)
	} else {
		p = n.ctrd.RunPod(t, name, "v2", qos, nil)
	}
	if spec.Name == "" {
		spec.Name = name
	}
	id := p.StartContainerSpec(t, spec)
	c := &ctr{pod: p, ID: id, Dir: filepath.Join(cgRoot, p.Parent, "cri-containerd-"+id+".scope")}
	require.Eventually(t, func() bool { return len(c.pids(t)) > 0 }, 60*time.Second, 50*time.Millisecond,
		"container %s: no process in %s", name, c.Dir)
	// As the cache's background refresh would within runtime.refresh_interval:
	// the tests assert on identity from CRI, not on the refresh's timing.
	n.ids.Refresh(t.Context())
	return c
}

// pids are the container's processes (cgroup.procs).
func (c *ctr) pids(_ *testing.T) []int {
	b, err := os.ReadFile(filepath.Join(c.Dir, "cgroup.procs"))
	if err != nil {
		return nil
	}
	var out []int
	for _, f := range strings.Fields(string(b)) {
		if pid, err := strconv.Atoi(f); err == nil {
			out = append(out, pid)
		}
	}
	return out
}

// shellWaiting reports whether the container's first process (its shell,
// whose busy subshells the spin workload starts) sleeps in its wait: only
// then are exactly the subshells running (cgrouptest.Waiting).
func (c *ctr) shellWaiting(t *testing.T) bool {
	pids := c.pids(t)
	if len(pids) == 0 {
		return false
	}
	return cgrouptest.Waiting(slices.Min(pids))
}

// path is p inside the container's root filesystem, through its first
// process.
func (c *ctr) path(t *testing.T, p string) string {
	t.Helper()
	pids := c.pids(t)
	require.NotEmpty(t, pids)
	return filepath.Join(fmt.Sprintf("/proc/%d/root", pids[0]), p)
}

// waitFile waits until the container has created p. A file whose content
// the test reads must appear whole: the container writes it under another
// name and renames it (`echo $? > /tmp/rc.new; mv /tmp/rc.new /tmp/rc`),
// or the test may read it empty between the shell's open and its write.
func (c *ctr) waitFile(t *testing.T, p string, d time.Duration) {
	t.Helper()
	require.Eventually(t, func() bool { _, err := os.Stat(c.path(t, p)); return err == nil }, d, 100*time.Millisecond,
		"the container never created %s", p)
}

// scrape scrapes the node, failing on errors about own (container IDs and
// pod UIDs) or about nobody.
func scrapeOwn(t *testing.T, s *scrape.Scraper, own ...string) pmetric.Metrics {
	t.Helper()
	m, err := s.Scrape(context.Background())
	machine.RequireNoOwnErrors(t, err, own...)
	return m
}

func (c *ctr) own() []string { return []string{c.ID, c.pod.UID} }

// values are the points of the resource whose attr is val, keyed by metric
// name and the point's attribute values in the order of their keys
// ("container.disk.io/write/vdb": disk.io.direction, system.device).
func values(m pmetric.Metrics, attr, val string) map[string]float64 {
	out := map[string]float64{}
	eachPoint(m, attr, val, func(key string, dp pmetric.NumberDataPoint) { out[key] = number(dp) })
	return out
}

// stamps are the points' timestamps, keyed as values.
func stamps(m pmetric.Metrics, attr, val string) map[string]time.Time {
	out := map[string]time.Time{}
	eachPoint(m, attr, val, func(key string, dp pmetric.NumberDataPoint) { out[key] = dp.Timestamp().AsTime() })
	return out
}

func eachPoint(m pmetric.Metrics, attr, val string, fn func(string, pmetric.NumberDataPoint)) {
	for i := 0; i < m.ResourceMetrics().Len(); i++ {
		rm := m.ResourceMetrics().At(i)
		if v, ok := rm.Resource().Attributes().Get(attr); !ok || v.Str() != val {
			continue
		}
		for si := 0; si < rm.ScopeMetrics().Len(); si++ {
			ms := rm.ScopeMetrics().At(si).Metrics()
			for j := 0; j < ms.Len(); j++ {
				mt := ms.At(j)
				var dps pmetric.NumberDataPointSlice
				switch mt.Type() {
				case pmetric.MetricTypeSum:
					dps = mt.Sum().DataPoints()
				case pmetric.MetricTypeGauge:
					dps = mt.Gauge().DataPoints()
				default:
					continue
				}
				for k := 0; k < dps.Len(); k++ {
					dp := dps.At(k)
					fn(mt.Name()+attrKey(dp.Attributes()), dp)
				}
			}
		}
	}
}

func attrKey(a pcommon.Map) string {
	keys := make([]string, 0, a.Len())
	a.Range(func(k string, _ pcommon.Value) bool { keys = append(keys, k); return true })
	sort.Strings(keys)
	var b strings.Builder
	for _, k := range keys {
		v, _ := a.Get(k)
		b.WriteString("/" + v.AsString())
	}
	return b.String()
}

func number(dp pmetric.NumberDataPoint) float64 {
	if dp.ValueType() == pmetric.NumberDataPointValueTypeInt {
		return float64(dp.IntValue())
	}
	return dp.DoubleValue()
}

// resource is the attributes of the resource whose attr is val.
func resource(m pmetric.Metrics, attr, val string) map[string]any {
	for i := 0; i < m.ResourceMetrics().Len(); i++ {
		a := m.ResourceMetrics().At(i).Resource().Attributes()
		if v, ok := a.Get(attr); ok && v.Str() == val {
			return a.AsRaw()
		}
	}
	return nil
}

// nodeValues are the node resource's points (the resource with only
// k8s.node.name).
func nodeValues(m pmetric.Metrics) map[string]float64 {
	out := map[string]float64{}
	for i := 0; i < m.ResourceMetrics().Len(); i++ {
		rm := m.ResourceMetrics().At(i)
		if a := rm.Resource().Attributes(); a.Len() != 1 {
			continue
		}
		one := pmetric.NewMetrics()
		rm.CopyTo(one.ResourceMetrics().AppendEmpty())
		for k, v := range values(one, "k8s.node.name", nodeName) {
			out[k] = v
		}
	}
	return out
}

// The kernel's own files.

func readFile(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	require.NoError(t, err)
	return string(b)
}

func readU64(t *testing.T, p string) uint64 {
	t.Helper()
	v, err := strconv.ParseUint(strings.TrimSpace(readFile(t, p)), 10, 64)
	require.NoError(t, err, p)
	return v
}

// keyed parses a flat-keyed file ("key value" lines: memory.stat, cpu.stat,
// memory.events, /proc/meminfo without the unit).
func keyed(t *testing.T, p string) map[string]uint64 {
	t.Helper()
	out := map[string]uint64{}
	sc := bufio.NewScanner(strings.NewReader(readFile(t, p)))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 2 {
			continue
		}
		if v, err := strconv.ParseUint(f[1], 10, 64); err == nil {
			out[strings.TrimSuffix(f[0], ":")] = v
		}
	}
	return out
}

// psiTotal is the total= of a pressure file's some or full line (µs).
func psiTotal(t *testing.T, p, kind string) uint64 {
	t.Helper()
	for _, line := range strings.Split(readFile(t, p), "\n") {
		f := strings.Fields(line)
		if len(f) == 0 || f[0] != kind {
			continue
		}
		for _, kv := range f[1:] {
			if v, ok := strings.CutPrefix(kv, "total="); ok {
				n, err := strconv.ParseUint(v, 10, 64)
				require.NoError(t, err)
				return n
			}
		}
	}
	t.Fatalf("%s: no %s line", p, kind)
	return 0
}

// ioStat is one device's line of io.stat ("maj:min" → key → value).
func ioStat(t *testing.T, dir, dev string) map[string]uint64 {
	t.Helper()
	out := map[string]uint64{}
	for _, line := range strings.Split(readFile(t, filepath.Join(dir, "io.stat")), "\n") {
		f := strings.Fields(line)
		if len(f) == 0 || f[0] != dev {
			continue
		}
		for _, kv := range f[1:] {
			k, v, _ := strings.Cut(kv, "=")
			n, err := strconv.ParseUint(v, 10, 64)
			if err == nil {
				out[k] = n
			}
		}
	}
	return out
}

// between: got lies between the kernel's reads a and b (in either order).
func between(t *testing.T, name string, got float64, a, b uint64) {
	t.Helper()
	nearBetween(t, name, got, a, b, 0)
}

// nearBetween: got lies between the kernel's reads a and b (in either
// order), give or take slack.
func nearBetween(t *testing.T, name string, got float64, a, b, slack uint64) {
	t.Helper()
	lo, hi := float64(min(a, b))-float64(slack), float64(max(a, b)+slack)
	assert.True(t, got >= lo && got <= hi, "%s = %.0f, the kernel said %d then %d (slack %d)", name, got, a, b, slack)
}

// betweenUsec: got (seconds) lies between the kernel's a and b (µs).
func betweenUsec(t *testing.T, name string, got float64, a, b uint64) {
	t.Helper()
	lo, hi := float64(min(a, b))/1e6-1e-9, float64(max(a, b))/1e6+1e-9
	assert.True(t, got >= lo && got <= hi, "%s = %.6f s, the kernel said %d µs then %d µs", name, got, a, b)
}

// httpGet fetches url, an error for anything but 200.
func httpGet(url string) (string, error) {
	resp, err := http.Get(url) //nolint:gosec // G107: a test: the URL of a server the test started
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return "", err
	}
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("%s: %s: %s", url, resp.Status, b)
	}
	return string(b), nil
}

func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}

// workload is the container command running the workload binary.
func workload(mode string, args ...string) []string {
	return append([]string{"/bin/workload", mode}, args...)
}

// shell is a container command run by busybox sh.
func shell(script string) []string { return []string{"/bin/sh", "-c", script} }

// writeResult writes a file the host reads back.
func writeResult(t *testing.T, name string, b []byte) {
	t.Helper()
	if results() == "" {
		return
	}
	require.NoError(t, os.WriteFile(filepath.Join(results(), name), b, 0o600))
}

// cpuResources is a CPU quota as the kubelet sets it for a limit of
// quota/period cores.
func cpuResources(quotaUs, periodUs int64) *runtimeapi.LinuxContainerResources {
	return &runtimeapi.LinuxContainerResources{CpuQuota: quotaUs, CpuPeriod: periodUs, CpuShares: 102}
}
