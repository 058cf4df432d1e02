// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

//go:build realmachine

package e2e

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"

	"github.com/containerstats/containerstatsreceiver/internal/testing/kubetest"
)

// newcomerMarker is the line of README.md (and docs/deploy.md) just
// above the fenced block of the newcomer's path.
const newcomerMarker = "<!-- newcomer path: make kube-test runs these lines (test/e2e/newcomer_test.go) -->"

// newcomerPath returns the commands of the fenced block after
// newcomerMarker in file (relative to the repository), one per line,
// and the block as it is written.
func newcomerPath(t *testing.T, file string) (cmds []string, block string) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(repoRoot(t), file))
	require.NoError(t, err)
	_, rest, ok := strings.Cut(string(b), newcomerMarker+"\n")
	require.True(t, ok, "%s has no line %q", file, newcomerMarker)
	rest, ok = strings.CutPrefix(rest, "```sh\n")
	require.True(t, ok, "%s: no ```sh block right after the newcomer path's marker", file)
	block, _, ok = strings.Cut(rest, "```\n")
	require.True(t, ok, "%s: the newcomer path's block does not end", file)
	for _, l := range strings.Split(strings.TrimSuffix(block, "\n"), "\n") {
		require.NotEmpty(t, strings.TrimSpace(l), "%s: an empty line in the newcomer path's block", file)
		cmds = append(cmds, l)
	}
	return cmds, block
}

// TestNewcomerPath runs README.md's path from a cluster to data in a
// backend ("## Deploying") on a cluster of its own, line by line as a
// user types it, and finds the data in the backend: Prometheus 3 with
// deploy/prometheus-otlp/prometheus.yml, whose OTLP endpoint is BACKEND.
//
//   - `make image` is make kube-test's own prerequisite (the same target
//     in the same tree), so it has run: the test requires the line and
//     the archive it writes.
//   - A line whose comment says "on each node" runs on the node (in its
//     mount namespace, kubetest.Node.Command), which was started with
//     no image of ours: that line imports it.
//   - The others run in bash with kubectl (make kube-bins, the cluster's
//     version) first in PATH and KUBECONFIG the cluster's admin, in a
//     directory of their own holding the checkout's deploy/ and bin/
//     (deploy/tls.sh leaves ./containerstats-tls there).
//
// What the test adds after the commands, because this cluster has no
// DNS and no Service proxy (nothing else): the DaemonSet's pod finds
// the gateway's Service name through hostAliases, the gateway pod's IP,
// one `kubectl patch`.
func TestNewcomerPath(t *testing.T) {
	cmds, block := newcomerPath(t, "README.md")
	require.LessOrEqual(t, len(cmds), 5, "README's newcomer path has more than five commands")
	_, deployBlock := newcomerPath(t, filepath.Join("docs", "deploy.md"))
	require.Equal(t, block, deployBlock, "docs/deploy.md's newcomer path is not README's")
	require.Regexp(t, `^make image( |$)`, cmds[0], "the path's first command")

	repo := repoRoot(t)
	bin := kubetest.BinDir()
	kubectl := filepath.Join(bin, "kubectl")
	if _, err := os.Stat(kubectl); err != nil {
		need(t, "kubectl not built (make kube-bins): "+err.Error())
	}
	work := t.TempDir()
	for _, d := range []string{"deploy", "bin"} {
		require.NoError(t, os.Symlink(filepath.Join(repo, d), filepath.Join(work, d)))
	}
	archive := filepath.Join(work, "bin", "otelcol-containerstats-image.tar")
	_, err := os.Stat(archive)
	require.NoError(t, err, "make image's archive (make kube-test builds it first)")

	c := kubetest.Start(t, bin)
	c.StartControllers(t, bin)
	node := c.StartNode(t, bin) // no image of ours: the path imports it
	p3cfg, err := os.ReadFile(filepath.Join(repo, "deploy", "prometheus-otlp", "prometheus.yml"))
	require.NoError(t, err)
	// On the node's address, which the pods reach.
	prom := launchPrometheus(t, "prometheus3-newcomer", prometheus3Bin(t), bridgeAddr(t), string(p3cfg), "--web.enable-otlp-receiver")
	backend := "http://" + prom.addr + "/api/v1/otlp"

	env := append(withoutEnv(os.Environ(), "PATH", "KUBECONFIG", "BACKEND", "MAKEFLAGS", "MAKELEVEL", "CONTAINERD_ADDRESS", "CONTAINERD_NAMESPACE"),
		"PATH="+bin+":"+os.Getenv("PATH"), "KUBECONFIG="+c.Kubeconfig(t), "BACKEND="+backend)
	which, err := shell(env, work, "command -v kubectl")
	require.NoError(t, err)
	require.Equal(t, kubectl, strings.TrimSpace(which), "kubectl in the path's PATH")

	t0 := time.Now()
	for i, line := range cmds[1:] {
		var cmd *exec.Cmd
		where := "here"
		if strings.Contains(line, "# on each node") {
			cmd = node.Command("bash", "-euo", "pipefail", "-c", "cd \"$1\" && "+line, "newcomer", work)
			where = "on the node"
		} else {
			cmd = exec.Command("bash", "-euo", "pipefail", "-c", line)
			cmd.Dir = work
		}
		cmd.Env = env
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		start := time.Now()
		runErr := cmd.Run()
		t.Logf("command %d, %s, %.1f s: %s\n%s%s", i+2, where, time.Since(start).Seconds(), line, stdout.String(), stderr.String())
		require.NoError(t, runErr, "README's newcomer path, command %d: %s\n%s", i+2, line, stderr.String())
		require.NotContains(t, stderr.String(), "Warning", "command %d: %s", i+2, line)
	}

	gw := kubetest.WaitPod(t, c.Client, collectorNS, "app.kubernetes.io/name="+gatewayName, 5*time.Minute, func(p *corev1.Pod) bool {
		for _, e := range p.Spec.Containers[0].Env {
			if e.Name == "BACKEND_OTLP_ENDPOINT" {
				return e.Value == backend
			}
		}
		return false
	})
	t.Logf("gateway pod %s Ready at %s, %.1f s after command 2", gw.Name, gw.Status.PodIP, time.Since(t0).Seconds())
	patch := fmt.Sprintf(`{"spec":{"template":{"spec":{"hostAliases":[{"ip":%q,"hostnames":[%q]}]}}}}`, gw.Status.PodIP, gatewayService)
	out, err := shell(env, work, "kubectl -n "+collectorNS+" patch daemonset "+dsName+" --type merge -p '"+patch+"'")
	require.NoError(t, err, out)
	t.Logf("the test's one addition (no DNS here): kubectl -n %s patch daemonset %s --type merge -p '%s': %s", collectorNS, dsName, patch, out)
	agent := kubetest.WaitPod(t, c.Client, collectorNS, "app.kubernetes.io/name="+dsName, 3*time.Minute, func(p *corev1.Pod) bool { return len(p.Spec.HostAliases) == 1 })
	t.Logf("collector pod %s Ready, %.1f s after command 2", agent.Name, time.Since(t0).Seconds())

	// The data, in the backend: the node's, and the containers of both
	// pods with their Kubernetes identity.
	var got []sample
	eventually(t, 3*time.Minute, "the node's and both pods' series in the backend", func() error {
		prom.proc.alive(t)
		s, err := prom.query(fmt.Sprintf(`k8s_node_cpu_time_seconds_total{k8s_node_name=%q}`, kubetest.NodeName))
		if err != nil || len(s) == 0 {
			return fmt.Errorf("node: %v %w", s, err)
		}
		got, err = prom.query(fmt.Sprintf(`container_memory_working_set_bytes{k8s_namespace_name=%q, k8s_node_name=%q}`, collectorNS, kubetest.NodeName))
		if err != nil {
			return err
		}
		for _, p := range []*corev1.Pod{gw, agent} {
			if !hasPod(got, p) {
				return fmt.Errorf("no series of pod %s: %v", p.Name, got)
			}
		}
		return nil
	})
	t.Logf("data in the backend %.1f s after command 2: %d series of container_memory_working_set_bytes in namespace %s", time.Since(t0).Seconds(), len(got), collectorNS)
}

// hasPod reports whether one of s is a container of pod p, named as the
// API names it.
func hasPod(s []sample, p *corev1.Pod) bool {
	for _, x := range s {
		if x.Labels["k8s_pod_name"] == p.Name && x.Labels["k8s_pod_uid"] == string(p.UID) &&
			x.Labels["k8s_container_name"] == p.Spec.Containers[0].Name {
			return true
		}
	}
	return false
}

// shell runs script in bash in dir with env; returns its output.
func shell(env []string, dir, script string) (string, error) {
	cmd := exec.Command("bash", "-euo", "pipefail", "-c", script)
	cmd.Dir, cmd.Env = dir, env
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// withoutEnv is env without the variables names.
func withoutEnv(env []string, names ...string) []string {
	return slices.DeleteFunc(slices.Clone(env), func(e string) bool {
		name, _, _ := strings.Cut(e, "=")
		return slices.Contains(names, name)
	})
}
