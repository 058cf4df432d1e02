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
}

// startKubelet starts bin with the configuration cfg (kubeletConfig's
// text, written to dir/<name>.yaml) and root directory dir/root; it is
// stopped in t's cleanup at the latest, its log's end shown if t failed.
func startKubelet(t *testing.T, bin, dir, name, cfg string) *kubeletProc {
	t.Helper()
	path := filepath.Join(dir, name+".yaml")
	require.NoError(t, os.WriteFile(path, []byte(cfg), 0o600))
	k := &kubeletProc{log: &bytes.Buffer{}}
	k.cmd = exec.Command(bin, "--config="+path, "--root-dir="+filepath.Join(dir, "root"), "--hostname-override="+nodeName, //nolint:gosec // G204: a test tool: the command and its arguments are the test's own
		"--node-ip="+kubeletNodeIP, "--v=1")
	k.cmd.Stdout, k.cmd.Stderr = k.log, k.log
	k.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	k.started = time.Now()
	require.NoError(t, k.cmd.Start())
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
		done := make(chan struct{})
		go func() { _ = k.cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = k.cmd.Process.Kill()
			<-done
		}
	})
}

// sample is one of our scrapes: when, and the values of interest by key.
type sample struct {
	at     time.Time
	values map[string]float64
}

// samples are our scrapes in time order.
type samples []sample

// bracket reports whether when lies between our first and last scrape.
func (s samples) bracket(when time.Time) bool {
	return len(s) > 0 && !when.Before(s[0].at) && !when.After(s[len(s)-1].at)
}

// at is ours at a kubelet's sample time: a counter interpolated between
// the scrapes around it, a gauge from the nearest scrape (and how far that
// scrape was); NaN outside our scrapes or where a scrape around it lacks
// the key.
func (s samples) at(key string, when time.Time, interpolate bool) (float64, time.Duration) {
	for i := 1; i < len(s); i++ {
		a, b := s[i-1], s[i]
		if when.Before(a.at) || when.After(b.at) {
			continue
		}
		va, oka := a.values[key]
		vb, okb := b.values[key]
		if interpolate {
			if !oka || !okb {
				return math.NaN(), 0
			}
			f := when.Sub(a.at).Seconds() / b.at.Sub(a.at).Seconds()
			return va + f*(vb-va), 0
		}
		if when.Sub(a.at) < b.at.Sub(when) {
			if !oka {
				return math.NaN(), 0
			}
			return va, a.at.Sub(when)
		}
		if !okb {
			return math.NaN(), 0
		}
		return vb, b.at.Sub(when)
	}
	return math.NaN(), 0
}

// span is ours over a kubelet sample whose time is known to a width (the
// Summary API's whole seconds: [when, when+width]): the lowest and highest
// of at over that span's ends.
func (s samples) span(key string, when time.Time, width time.Duration, interpolate bool) (lo, hi float64) {
	a, _ := s.at(key, when, interpolate)
	b, _ := s.at(key, when.Add(width), interpolate)
	return math.Min(a, b), math.Max(a, b)
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
