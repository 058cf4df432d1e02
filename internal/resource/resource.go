// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

// Package resource builds the container resources both signals carry, so
// that a container's metrics, log records and events have the same
// attributes.
package resource // import "github.com/containerstats/containerstatsreceiver/internal/resource"

import (
	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/containerstats/containerstatsreceiver/internal/cgroupfs"
	"github.com/containerstats/containerstatsreceiver/internal/identity"
	"github.com/containerstats/containerstatsreceiver/internal/metadata"
)

// Container builds the resource of one container: the cgroup c
// (ID, pod UID, QoS class and runtime the path tells), its identity ct and,
// when not nil, its pod's labels. Metrics and logs both build container
// resources with it, so the two signals carry the same attributes. Unknown
// values are omitted, never empty strings.
func Container(rb *metadata.ResourceBuilder, nodeName string, c *cgroupfs.Cgroup, ct *identity.Container, podLabels map[string]string) pcommon.Resource {
	if nodeName != "" {
		rb.SetK8sNodeName(nodeName)
	}
	SetIf(rb.SetContainerID, c.ContainerID) // unknown only for a log file nobody names
	switch {
	case ct.Runtime != "":
		rb.SetContainerRuntimeName(ct.Runtime)
	case c.Runtime != "":
		rb.SetContainerRuntimeName(c.Runtime)
	}
	podUID := c.PodUID
	if podUID == "" {
		podUID = ct.PodUID
	}
	if podUID != "" {
		rb.SetK8sPodUID(podUID)
	}
	if c.QoS != "" {
		rb.SetK8sPodQosClass(c.QoS)
	}
	SetContainerIdentity(rb, ct)
	res := rb.Emit()
	SetPodLabels(res, podLabels)
	SetContainerLabels(res, ct.Labels)
	return res
}

// SetContainerIdentity sets the identity attributes of a container's
// resource. Unknown values are omitted, never set to "".
func SetContainerIdentity(rb *metadata.ResourceBuilder, ct *identity.Container) {
	SetIf(rb.SetContainerName, ct.Name)
	SetIf(rb.SetContainerImageName, ct.ImageName)
	if ct.ImageTag != "" {
		rb.SetContainerImageTags([]any{ct.ImageTag}) // the conventions' string array, of the one tag the reference names
	}
	SetIf(rb.SetK8sPodName, ct.PodName)
	SetIf(rb.SetK8sNamespaceName, ct.Namespace)
	SetIf(rb.SetK8sContainerName, ct.ContainerName)
	if ct.HasRestart {
		rb.SetK8sContainerRestartCount(ct.RestartCount)
	}
}

// SetIf sets v when it is known (not "").
func SetIf(set func(string), v string) {
	if v != "" {
		set(v)
	}
}

// PodLabelPrefix prefixes pod labels set on pod and container resources when
// pod_labels is on (mdatagen cannot declare dynamic keys).
const PodLabelPrefix = "k8s.pod.label."

// SetPodLabels sets labels as k8s.pod.label.<key> attributes of res.
func SetPodLabels(res pcommon.Resource, labels map[string]string) {
	for k, v := range labels {
		res.Attributes().PutStr(PodLabelPrefix+k, v)
	}
}

// ContainerLabelPrefix prefixes the container labels on the allow-list
// (container_labels) on container resources: the semantic conventions'
// container.label.<key>.
const ContainerLabelPrefix = "container.label."

// SetContainerLabels sets labels as container.label.<key> attributes of res.
func SetContainerLabels(res pcommon.Resource, labels map[string]string) {
	for k, v := range labels {
		res.Attributes().PutStr(ContainerLabelPrefix+k, v)
	}
}

// Pods looks pods up by UID (the identity cache).
type Pods interface {
	Pod(uid string) (identity.Pod, bool)
}

// PodLabels are the labels of the pod of container c (its path's pod UID,
// else its identity's), nil when the pod is unknown.
func PodLabels(pods Pods, c *cgroupfs.Cgroup, ct *identity.Container) map[string]string {
	uid := c.PodUID
	if uid == "" {
		uid = ct.PodUID
	}
	if p, ok := pods.Pod(uid); ok && uid != "" {
		return p.Labels
	}
	return nil
}
