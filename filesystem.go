// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

package containerstatsreceiver // import "github.com/containerstats/containerstatsreceiver"

import (
	"go.uber.org/zap"

	"github.com/containerstats/containerstatsreceiver/internal/cri"
	"github.com/containerstats/containerstatsreceiver/internal/fsstats"
	"github.com/containerstats/containerstatsreceiver/receiver/scrape"
)

// filesystemOption is the scraper's filesystem collection: nil when every
// filesystem metric is disabled; without CRI calls when the writable-layer
// (container.filesystem.*, k8s.container.ephemeral_storage.usage's rootfs
// part, k8s.pod.filesystem.usage) and image-filesystem metrics are;
// without the log walk when k8s.container.ephemeral_storage.usage (its
// logs part) and k8s.pod.filesystem.usage are; without the volumes when
// k8s.pod.volume.* and k8s.pod.filesystem.* are.
func filesystemOption(c *Config, logger *zap.Logger) scrape.Filesystem {
	m := &c.Metrics
	eph := m.K8sContainerEphemeralStorageUsage.Enabled
	podUse := m.K8sPodFilesystemUsage.Enabled
	runtime := m.ContainerFilesystemUsage.Enabled || m.ContainerFilesystemInodeUsed.Enabled || eph || podUse ||
		m.ContainerFilesystemCapacity.Enabled || m.ContainerFilesystemAvailable.Enabled ||
		m.K8sNodeImageFilesystemUsage.Enabled || m.K8sNodeImageFilesystemInodeUsed.Enabled ||
		m.K8sNodeImageFilesystemCapacity.Enabled || m.K8sNodeImageFilesystemAvailable.Enabled
	logs := eph || podUse
	volumes := podUse || m.K8sPodFilesystemCapacity.Enabled || m.K8sPodFilesystemAvailable.Enabled ||
		m.K8sPodVolumeAvailable.Enabled || m.K8sPodVolumeCapacity.Enabled || m.K8sPodVolumeUsage.Enabled ||
		m.K8sPodVolumeInodeCount.Enabled || m.K8sPodVolumeInodeFree.Enabled || m.K8sPodVolumeInodeUsed.Enabled
	node := m.K8sNodeFilesystemCapacity.Enabled || m.K8sNodeFilesystemAvailable.Enabled || m.K8sNodeFilesystemUsage.Enabled ||
		m.K8sNodeFilesystemInodeCount.Enabled || m.K8sNodeFilesystemInodeFree.Enabled
	if !runtime && !logs && !node && !volumes {
		return nil
	}
	f := newFilesystem(c, logger)
	if !runtime {
		f.cfg.Connect = nil
	}
	f.cfg.NoLogs = !logs
	f.cfg.NoVolumes = !volumes
	return f.build()
}

// fsBuilder holds a collection's configuration before it is built.
type fsBuilder struct{ cfg fsstats.Config }

// newFilesystem is the configuration of the background filesystem
// collection of a metrics receiver. Its CRI connection is its own (the
// identity cache's is shared with the logs signal and serialised by it), to
// the same endpoint the identity uses: runtime.cri_endpoint, else the
// socket detected under root_path in Start. Without CRI
// (runtime.cri_enabled false or no socket) writable layers and image
// filesystems are absent; log sizes and the node filesystem are still
// reported.
func newFilesystem(c *Config, logger *zap.Logger) fsBuilder {
	return fsBuilder{cfg: fsstats.Config{
		Root:     c.RootPath,
		Interval: c.FilesystemCollectionInterval,
		Timeout:  c.Runtime.Timeout,
		Logger:   logger,
		Connect: func() (fsstats.Source, error) {
			ep := criEndpoint(c.RootPath, c.Runtime)
			if ep == "" {
				logger.Info("No CRI endpoint: container.filesystem.usage, container.filesystem.inode.used, the rootfs part of k8s.container.ephemeral_storage.usage and k8s.node.image_filesystem.* are not reported")
				return nil, nil
			}
			cl, err := cri.Dial(ep)
			if err != nil {
				return nil, err
			}
			return cri.NewFilesystemSource(cl), nil
		},
	}}
}

// build returns the collection.
func (b fsBuilder) build() *fsstats.Collector { return fsstats.New(b.cfg) }

// criEndpoint is the CRI socket the identity and the filesystem collection
// use: cri.Endpoint (runtime.cri_endpoint, else the first known socket
// under root); "" when CRI is off or no socket exists.
func criEndpoint(root string, rt RuntimeConfig) string {
	if !rt.CRIEnabled {
		return ""
	}
	return cri.Endpoint(root, rt.CRIEndpoint)
}
