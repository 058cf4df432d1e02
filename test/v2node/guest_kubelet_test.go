// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

//go:build linux && v2guest

package v2node

import (
	"bytes"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/containerstats/containerstatsreceiver/internal/testing/sidebyside"
)

// The standalone kubelet of TestFieldNote2 and its CRI-stats comparison,
// and what both compare with: our scrapes over time.

// kubeletConfig is a standalone kubelet (no API server) on the systemd
// cgroup driver, static pods from dir, the read-only port on loopback;
// the feature gates are appended (featureGates).
const kubeletConfig = `apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
address: 127.0.0.1
readOnlyPort: 10255
healthzBindAddress: 127.0.0.1
healthzPort: 10248
authentication:
  anonymous: {enabled: true}
  webhook: {enabled: false}
authorization: {mode: AlwaysAllow}
containerRuntimeEndpoint: unix://%s
cgroupDriver: systemd
cgroupsPerQOS: true
cgroupRoot: /
failSwapOn: false
staticPodPath: %s
fileCheckFrequency: 2s
enforceNodeAllocatable: []
makeIPTablesUtilChains: false
resolvConf: ""
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
evictionHard:
  memory.available: "1Mi"
  nodefs.available: "1%%"
  imagefs.available: "1%%"
`

// kubeletRO is the kubelet's read-only port.
const kubeletRO = "http://127.0.0.1:10255"

// kubeletNodeIP is the node's address: the guest has no network device,
// and the kubelet takes no loopback address for its node.
const kubeletNodeIP = "10.88.219.1"

// kubeletProc is a running standalone kubelet.
type kubeletProc struct {
	cmd     *exec.Cmd
	log     *bytes.Buffer
	started time.Time
	once    sync.Once
	exited  chan struct{} // closed when the kubelet has exited
}

// running reports whether the kubelet has not exited.
func (k *kubeletProc) running() bool {
	select {
	case <-k.exited:
		return false
	default:
		return true
	}
}

// startKubelet starts bin with the configuration cfg (kubeletConfig's
// text, written to dir/<name>.yaml) and root directory dir/root; it is
// stopped in t's cleanup at the latest, its log's end shown if t failed.
func startKubelet(t *testing.T, bin, dir, name, cfg string) *kubeletProc {
	t.Helper()
	path := filepath.Join(dir, name+".yaml")
	require.NoError(t, os.WriteFile(path, []byte(cfg), 0o600))
	k := &kubeletProc{log: &bytes.Buffer{}, exited: make(chan struct{})}
	k.cmd = exec.Command(bin, "--config="+path, "--root-dir="+filepath.Join(dir, "root"), "--hostname-override="+nodeName, //nolint:gosec // G204: a test tool: the command and its arguments are the test's own
		"--node-ip="+kubeletNodeIP, "--v=1")
	k.cmd.Stdout, k.cmd.Stderr = k.log, k.log
	k.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	k.started = time.Now()
	require.NoError(t, k.cmd.Start())
	go func() { _ = k.cmd.Wait(); close(k.exited) }()
	t.Cleanup(func() {
		k.stop()
		if t.Failed() {
			t.Logf("kubelet %s's log (end):\n%s", name, tail(k.log.String(), 6000))
		}
	})
	return k
}

// stop ends the kubelet (SIGTERM, SIGKILL after 10 s); the pods' containers
// keep running, as they do when a node's kubelet restarts.
func (k *kubeletProc) stop() {
	k.once.Do(func() {
		_ = k.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-k.exited:
		case <-time.After(10 * time.Second):
			_ = k.cmd.Process.Kill()
			<-k.exited
		}
	})
}

// sample is one of our scrapes: when (the middle of the scrape, and
// from/to: its start and end, between which it read every file), and the
// values of interest by key.
type sample struct {
	at, from, to time.Time
	values       map[string]float64
}

// samples are our scrapes in time order.
type samples []sample

// readSlack is how long before its stamped time a kubelet figure may have
// been read: cAdvisor (and containerd for the CRI stats) stamp a figure
// after reading it, a Summary figure's time is cut to its whole second.
const readSlack = time.Second

// bracket reports whether a kubelet figure read in [from, to] (widened
// by readSlack before it) lies between two of our scrapes: one that ended
// before it and one that began after it.
func (s samples) bracket(from, to time.Time) bool {
	_, _, ok := s.window(from, to)
	return ok
}

// window is the scrapes around a kubelet figure read in [from, to]: the
// index of the last scrape that ended by from − readSlack and of the first
// that began at or after to.
func (s samples) window(from, to time.Time) (i, j int, ok bool) {
	i, j = -1, -1
	for k, sm := range s {
		if !sm.to.After(from.Add(-readSlack)) {
			i = k
		}
		if j < 0 && !sm.from.Before(to) {
			j = k
		}
	}
	return i, j, i >= 0 && j >= 0
}

// bounds is ours around a kubelet figure read in [from, to]: the lowest
// and the highest of key over the scrapes from the last one that ended
// before the read to the first one that began after it, both included. A
// counter's figure read in that span lies between them, a gauge's does
// where it moved one way; no interpolation. ok is false outside our
// scrapes or where one of them lacks the key.
func (s samples) bounds(key string, from, to time.Time) (lo, hi float64, ok bool) {
	i, j, ok := s.window(from, to)
	if !ok {
		return 0, 0, false
	}
	lo, hi = math.Inf(1), math.Inf(-1)
	for _, sm := range s[i : j+1] {
		v, has := sm.values[key]
		if !has {
			return 0, 0, false
		}
		lo, hi = math.Min(lo, v), math.Max(hi, v)
	}
	return lo, hi, true
}

// boundedRow is a sidebyside row whose comparison is bounds': the
// kubelet's figure v passes when it lies in [lo − tol, hi + tol].
func boundedRow(quantity, entity string, ref, lo, hi, tol float64, unit string) sidebyside.Row {
	return sidebyside.Row{
		Quantity: quantity, Entity: entity, Ref: ref, Tol: tol, Unit: unit, Ours: lo,
		Pass:  func(v float64) bool { return v >= lo-tol && v <= hi+tol },
		Shown: showBounds(lo, hi, unit),
	}
}

// showBounds is ours' bounds as a sidebyside table shows them.
func showBounds(lo, hi float64, unit string) string {
	f := func(v float64) string {
		switch unit {
		case "B":
			return strconv.FormatFloat(v, 'f', 0, 64) + " B"
		case "s":
			return strconv.FormatFloat(v, 'f', 3, 64) + " s"
		}
		return strconv.FormatFloat(v, 'f', -1, 64)
	}
	if lo == hi {
		return f(lo)
	}
	return f(lo) + " .. " + f(hi)
}

// last is the last scrape's value of key (0 when there is none).
func (s samples) last(key string) float64 {
	if len(s) == 0 {
		return 0
	}
	return s[len(s)-1].values[key]
}

// expoSample is expoFind's first series of metric whose labels match want
// (a label wanted "" matches a label absent or empty), with the sample's
// timestamp (ms since the epoch, zero when the line has none).
func expoSample(expo, metric string, want map[string]string) (float64, time.Time, bool) {
	for _, line := range strings.Split(expo, "\n") {
		if !strings.HasPrefix(line, metric+"{") && !strings.HasPrefix(line, metric+" ") {
			continue
		}
		labels, rest := map[string]string{}, line[len(metric):]
		if strings.HasPrefix(rest, "{") {
			end := strings.LastIndexByte(rest, '}')
			if end < 0 {
				continue
			}
			labels = expoLabels(rest[1:end])
			rest = rest[end+1:]
		}
		match := true
		for k, v := range want {
			if labels[k] != v {
				match = false
			}
		}
		f := strings.Fields(rest)
		if !match || len(f) == 0 {
			continue
		}
		v, err := strconv.ParseFloat(f[0], 64)
		if err != nil {
			continue
		}
		if len(f) < 2 {
			return v, time.Time{}, true
		}
		ms, err := strconv.ParseInt(f[1], 10, 64)
		if err != nil {
			return v, time.Time{}, true
		}
		return v, time.UnixMilli(ms), true
	}
	return 0, time.Time{}, false
}

// expoLabels parses an exposition line's label set (`a="x",b="y"`).
func expoLabels(s string) map[string]string {
	out := map[string]string{}
	for s != "" {
		eq := strings.IndexByte(s, '=')
		if eq < 0 || eq+1 >= len(s) || s[eq+1] != '"' {
			break
		}
		k := strings.TrimSpace(s[:eq])
		i := eq + 2
		var v strings.Builder
		for i < len(s) && s[i] != '"' {
			if s[i] == '\\' && i+1 < len(s) {
				i++
				switch s[i] {
				case 'n':
					v.WriteByte('\n')
				default:
					v.WriteByte(s[i])
				}
			} else {
				v.WriteByte(s[i])
			}
			i++
		}
		out[k] = v.String()
		s = strings.TrimPrefix(strings.TrimSpace(s[min(i+1, len(s)):]), ",")
	}
	return out
}

// podLabels are the kubelet's labels of a static pod of ours.
func podLabels(name string) map[string]string {
	return map[string]string{"pod": name + "-" + nodeName, "namespace": "fieldnote"}
}

// ctrLabels are the kubelet's labels of a static pod's container (named
// as its pod).
func ctrLabels(name string) map[string]string {
	l := podLabels(name)
	l["container"] = name
	return l
}

// fmtValue is a value in its unit for the tables.
func fmtValue(v float64, unit string) string {
	switch unit {
	case "MiB":
		return strconv.FormatFloat(v/(1<<20), 'f', 2, 64) + " MiB"
	case "s":
		return strconv.FormatFloat(v, 'f', 3, 64) + " s"
	case "cores":
		return strconv.FormatFloat(v, 'f', 3, 64) + " cores"
	default:
		return strconv.FormatFloat(v, 'f', -1, 64) + unit
	}
}
