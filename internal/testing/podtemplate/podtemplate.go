// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

// Package podtemplate turns a Kubernetes pod template (the DaemonSet's in
// deploy/daemonset.yaml) into the CRI sandbox and container configs a
// kubelet would send, so the end-to-end test runs the collector through CRI
// exactly as the manifest says instead of from a second, hand-written copy.
// It covers what the manifest uses and refuses the rest.
package podtemplate // import "github.com/containerstats/containerstatsreceiver/internal/testing/podtemplate"

import (
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// Node is what a kubelet on the node would know.
type Node struct {
	Name      string // spec.nodeName for the downward API
	Namespace string // the pod's namespace
	PodName   string
	PodUID    string
	// HostPaths maps a hostPath volume's path to where it is on this
	// machine (a test's private CRI socket, a temp dir for pod-resources);
	// unmapped paths are used as they are.
	HostPaths map[string]string
	// ConfigMaps maps a ConfigMap name to the host directory holding its
	// keys as files (the kubelet's projected volume).
	ConfigMaps map[string]string
	// HostNetwork forces the node's network namespace (a node without a
	// CNI plugin) even when the template does not ask for it.
	HostNetwork bool
}

// Pod is the CRI view of one pod with one container.
type Pod struct {
	Sandbox   *runtimeapi.PodSandboxConfig
	Container *runtimeapi.ContainerConfig
}

// Translate builds the CRI configs for spec's only container.
func Translate(spec corev1.PodSpec, n Node) (*Pod, error) {
	if len(spec.Containers) != 1 || len(spec.InitContainers) != 0 {
		return nil, fmt.Errorf("want exactly one container and no init containers, got %d and %d", len(spec.Containers), len(spec.InitContainers))
	}
	c := spec.Containers[0]
	ns := &runtimeapi.NamespaceOption{Network: runtimeapi.NamespaceMode_POD, Pid: runtimeapi.NamespaceMode_CONTAINER, Ipc: runtimeapi.NamespaceMode_POD}
	if spec.HostNetwork || n.HostNetwork {
		ns.Network = runtimeapi.NamespaceMode_NODE
	}
	if spec.HostPID {
		ns.Pid = runtimeapi.NamespaceMode_NODE
	}
	if spec.HostIPC {
		ns.Ipc = runtimeapi.NamespaceMode_NODE
	}
	labels := map[string]string{
		"io.kubernetes.pod.name":      n.PodName,
		"io.kubernetes.pod.namespace": n.Namespace,
		"io.kubernetes.pod.uid":       n.PodUID,
	}
	qos := qosClass(c)
	sandbox := &runtimeapi.PodSandboxConfig{
		Metadata: &runtimeapi.PodSandboxMetadata{Name: n.PodName, Namespace: n.Namespace, Uid: n.PodUID},
		Labels:   labels,
		Linux: &runtimeapi.LinuxPodSandboxConfig{
			CgroupParent: cgroupParent(qos, n.PodUID),
			SecurityContext: &runtimeapi.LinuxSandboxSecurityContext{
				NamespaceOptions: ns,
			},
		},
	}

	mounts, err := mounts(spec, c, n)
	if err != nil {
		return nil, err
	}
	env, err := envs(c, n)
	if err != nil {
		return nil, err
	}
	sc, err := security(c, ns)
	if err != nil {
		return nil, err
	}
	clabels := map[string]string{"io.kubernetes.container.name": c.Name}
	for k, v := range labels {
		clabels[k] = v
	}
	cc := &runtimeapi.ContainerConfig{
		Metadata: &runtimeapi.ContainerMetadata{Name: c.Name},
		Image:    &runtimeapi.ImageSpec{Image: c.Image},
		Command:  c.Command,
		Args:     c.Args,
		Envs:     env,
		Mounts:   mounts,
		Labels:   clabels,
		Linux: &runtimeapi.LinuxContainerConfig{
			Resources:       resources(c),
			SecurityContext: sc,
		},
	}
	return &Pod{Sandbox: sandbox, Container: cc}, nil
}

func qosClass(c corev1.Container) string {
	if len(c.Resources.Requests) == 0 && len(c.Resources.Limits) == 0 {
		return "besteffort"
	}
	cpuL, memL := c.Resources.Limits[corev1.ResourceCPU], c.Resources.Limits[corev1.ResourceMemory]
	cpuR, okC := c.Resources.Requests[corev1.ResourceCPU]
	memR, okM := c.Resources.Requests[corev1.ResourceMemory]
	if !cpuL.IsZero() && !memL.IsZero() && (!okC || cpuR.Cmp(cpuL) == 0) && (!okM || memR.Cmp(memL) == 0) {
		return "guaranteed"
	}
	return "burstable"
}

// cgroupParent is the pod cgroup in the cgroupfs driver's form.
func cgroupParent(qos, uid string) string {
	if qos == "guaranteed" {
		return "/kubepods/pod" + uid
	}
	return "/kubepods/" + qos + "/pod" + uid
}

func mounts(spec corev1.PodSpec, c corev1.Container, n Node) ([]*runtimeapi.Mount, error) {
	vols := map[string]corev1.Volume{}
	for _, v := range spec.Volumes {
		vols[v.Name] = v
	}
	var out []*runtimeapi.Mount
	for _, vm := range c.VolumeMounts {
		v, ok := vols[vm.Name]
		if !ok {
			return nil, fmt.Errorf("volumeMount %s: no volume %q", vm.MountPath, vm.Name)
		}
		if vm.SubPath != "" {
			return nil, fmt.Errorf("volumeMount %s: subPath not supported", vm.MountPath)
		}
		var host string
		switch {
		case v.HostPath != nil:
			host = v.HostPath.Path
			if h, ok := n.HostPaths[host]; ok {
				host = h
			}
		case v.ConfigMap != nil:
			h, ok := n.ConfigMaps[v.ConfigMap.Name]
			if !ok {
				return nil, fmt.Errorf("volume %s: no host directory for ConfigMap %q", v.Name, v.ConfigMap.Name)
			}
			host = h
		default:
			return nil, fmt.Errorf("volume %s: only hostPath and configMap volumes are supported", v.Name)
		}
		prop := runtimeapi.MountPropagation_PROPAGATION_PRIVATE
		if vm.MountPropagation != nil {
			switch *vm.MountPropagation {
			case corev1.MountPropagationHostToContainer:
				prop = runtimeapi.MountPropagation_PROPAGATION_HOST_TO_CONTAINER
			case corev1.MountPropagationBidirectional:
				prop = runtimeapi.MountPropagation_PROPAGATION_BIDIRECTIONAL
			case corev1.MountPropagationNone:
			default:
				return nil, fmt.Errorf("volumeMount %s: mount propagation %q", vm.MountPath, *vm.MountPropagation)
			}
		}
		out = append(out, &runtimeapi.Mount{ContainerPath: vm.MountPath, HostPath: host, Readonly: vm.ReadOnly, Propagation: prop})
	}
	return out, nil
}

func envs(c corev1.Container, n Node) ([]*runtimeapi.KeyValue, error) {
	var out []*runtimeapi.KeyValue
	for _, e := range c.Env {
		switch {
		case e.ValueFrom == nil:
			out = append(out, &runtimeapi.KeyValue{Key: e.Name, Value: []byte(e.Value)})
		case e.ValueFrom.FieldRef != nil:
			var v string
			switch e.ValueFrom.FieldRef.FieldPath {
			case "spec.nodeName":
				v = n.Name
			case "metadata.name":
				v = n.PodName
			case "metadata.namespace":
				v = n.Namespace
			case "metadata.uid":
				v = n.PodUID
			default:
				return nil, fmt.Errorf("env %s: fieldRef %q not supported", e.Name, e.ValueFrom.FieldRef.FieldPath)
			}
			out = append(out, &runtimeapi.KeyValue{Key: e.Name, Value: []byte(v)})
		default:
			return nil, fmt.Errorf("env %s: only value and fieldRef are supported", e.Name)
		}
	}
	return out, nil
}

func security(c corev1.Container, ns *runtimeapi.NamespaceOption) (*runtimeapi.LinuxContainerSecurityContext, error) {
	out := &runtimeapi.LinuxContainerSecurityContext{NamespaceOptions: ns}
	sc := c.SecurityContext
	if sc == nil {
		return out, nil
	}
	if sc.Privileged != nil && *sc.Privileged {
		return nil, errors.New("privileged containers are not supported")
	}
	if sc.Capabilities != nil {
		out.Capabilities = &runtimeapi.Capability{}
		for _, cp := range sc.Capabilities.Add {
			out.Capabilities.AddCapabilities = append(out.Capabilities.AddCapabilities, string(cp))
		}
		for _, cp := range sc.Capabilities.Drop {
			out.Capabilities.DropCapabilities = append(out.Capabilities.DropCapabilities, string(cp))
		}
	}
	if sc.ReadOnlyRootFilesystem != nil {
		out.ReadonlyRootfs = *sc.ReadOnlyRootFilesystem
	}
	if sc.RunAsUser != nil {
		out.RunAsUser = &runtimeapi.Int64Value{Value: *sc.RunAsUser}
	}
	if sc.RunAsGroup != nil {
		out.RunAsGroup = &runtimeapi.Int64Value{Value: *sc.RunAsGroup}
	}
	if sc.AllowPrivilegeEscalation != nil {
		out.NoNewPrivs = !*sc.AllowPrivilegeEscalation
	}
	if sc.SeccompProfile != nil {
		switch sc.SeccompProfile.Type {
		case corev1.SeccompProfileTypeRuntimeDefault:
			out.Seccomp = &runtimeapi.SecurityProfile{ProfileType: runtimeapi.SecurityProfile_RuntimeDefault}
		case corev1.SeccompProfileTypeUnconfined:
			out.Seccomp = &runtimeapi.SecurityProfile{ProfileType: runtimeapi.SecurityProfile_Unconfined}
		default:
			return nil, fmt.Errorf("seccomp profile type %q not supported", sc.SeccompProfile.Type)
		}
	}
	return out, nil
}

// resources: the memory limit and CPU shares the kubelet would set
// (shares = milliCPU * 1024 / 1000, at least 2).
func resources(c corev1.Container) *runtimeapi.LinuxContainerResources {
	r := &runtimeapi.LinuxContainerResources{CpuShares: 2}
	if q, ok := c.Resources.Requests[corev1.ResourceCPU]; ok {
		r.CpuShares = max(2, q.MilliValue()*1024/1000)
	}
	if q, ok := c.Resources.Limits[corev1.ResourceMemory]; ok {
		r.MemoryLimitInBytes = q.Value()
	}
	if q, ok := c.Resources.Limits[corev1.ResourceCPU]; ok {
		r.CpuPeriod = 100000
		r.CpuQuota = q.MilliValue() * 100000 / 1000
	}
	return r
}
