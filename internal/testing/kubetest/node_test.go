// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

//go:build linux && realmachine

package kubetest

import (
	"context"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/containerstats/containerstatsreceiver/internal/testing/containerdtest"
)

// TestNodeRunsPods: the node registers Ready; a pod made through the API
// runs on the pod network (an address of PodSubnet) in a kubepods cgroup;
// the kubelet's read-only endpoints answer; and after the test's cleanup
// nothing of the node is left (checked in a subtest's cleanup order: the
// node is stopped by then).
func TestNodeRunsPods(t *testing.T) {
	var n *Node
	t.Run("node", func(t *testing.T) {
		bin := BinDir()
		c := Start(t, bin)
		c.StartControllers(t, bin)
		n = c.StartNode(t, bin)
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		pod := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: "sleeper", Namespace: "default", Labels: map[string]string{"app": "sleeper"}},
			Spec: corev1.PodSpec{
				AutomountServiceAccountToken: new(bool),
				Containers: []corev1.Container{{
					Name: "sleep", Image: containerdtest.Image, ImagePullPolicy: corev1.PullNever,
					Command: []string{"/bin/sleep", "3600"},
				}},
			},
		}
		_, err := c.Client.CoreV1().Pods("default").Create(ctx, pod, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		got := WaitReadyPod(t, c.Client, "default", "app=sleeper", "", 2*time.Minute)
		_, subnet, _ := net.ParseCIDR(PodSubnet)
		if ip := net.ParseIP(got.Status.PodIP); !subnet.Contains(ip) {
			t.Fatalf("pod IP %q not in %s", got.Status.PodIP, PodSubnet)
		}
		uid := string(got.UID)
		if _, err := os.Stat(filepath.Join("/sys/fs/cgroup/memory/kubepods/besteffort", "pod"+uid)); err != nil {
			t.Fatalf("pod cgroup: %v", err)
		}
		for _, path := range []string{"/metrics/resource", "/metrics/cadvisor", "/stats/summary"} {
			resp, err := http.Get(n.ReadOnlyURL + path)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK || !strings.Contains(string(b), "sleeper") {
				t.Fatalf("%s: %s, sleeper not in %d bytes", path, resp.Status, len(b))
			}
		}
	})
	if _, err := os.Stat(filepath.Join("/sys/class/net", Bridge)); err == nil {
		t.Errorf("bridge %s left behind", Bridge)
	}
	for _, h := range containerdtest.Hierarchies() {
		if _, err := os.Stat(filepath.Join(h, "kubepods")); err == nil {
			t.Errorf("%s/kubepods left behind", h)
		}
	}
}
