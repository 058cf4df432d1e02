//go:build cgo

// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

package gpu // import "github.com/containerstats/containerstatsreceiver/internal/gpu"

import (
	"context"
	"sync"
	"time"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
)

// DefaultPCIeInterval is how often the PCIe throughput of every GPU is
// sampled in the background when Options.PCIeInterval is 0: the receiver's
// default collection interval, so a scrape reports a sample at most about
// one scrape old.
const DefaultPCIeInterval = 10 * time.Second

// pcieSample is one GPU's PCIe throughput as last sampled: each direction
// with the return of its call (SUCCESS when it answered).
type pcieSample struct {
	tx, rx       Opt[float64] // bytes/s
	txRet, rxRet nvml.Return
}

// pcieGPU is a GPU the sampler samples.
type pcieGPU struct {
	index int
	uuid  string
	h     nvml.Device
}

// pcieSampler samples every whole GPU's PCIe throughput in a goroutine of
// its own, as the XID watcher waits for events in its own:
// nvmlDeviceGetPcieThroughput samples the link for 20 ms before it
// answers, once per direction, which inline would make a scrape wait
// 40 ms per GPU. Scrapes read the latest sample under mu, which the
// goroutine never holds while NVML samples. NVML is thread-safe: the
// goroutine's calls may overlap a scrape's calls on the same GPU.
type pcieSampler struct {
	interval time.Duration
	cancel   context.CancelFunc
	done     chan struct{}

	mu     sync.Mutex
	gpus   []pcieGPU
	latest map[string]pcieSample // GPU UUID ->
}

// startPCIe samples the GPUs once, before it returns, so that the first
// scrape has PCIe throughput too, then starts the sampler's goroutine.
func (c *Collector) startPCIe(gpus []pcieGPU) {
	interval := c.opts.PCIeInterval
	if interval <= 0 {
		interval = DefaultPCIeInterval
	}
	ctx, cancel := context.WithCancel(context.Background())
	p := &pcieSampler{interval: interval, cancel: cancel, done: make(chan struct{}), gpus: gpus, latest: map[string]pcieSample{}}
	p.sampleAll(ctx)
	c.pcie = p
	go p.run(ctx)
}

func (p *pcieSampler) run(ctx context.Context) {
	defer close(p.done)
	t := time.NewTicker(p.interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		p.sampleAll(ctx)
	}
}

// sampleAll samples every GPU not dropped, one after the other, and
// publishes each GPU's sample as soon as it is taken.
func (p *pcieSampler) sampleAll(ctx context.Context) {
	p.mu.Lock()
	gpus := append([]pcieGPU(nil), p.gpus...)
	p.mu.Unlock()
	for _, g := range gpus {
		if ctx.Err() != nil {
			return
		}
		s := samplePCIe(g.h)
		p.mu.Lock()
		if p.has(g.uuid) {
			p.latest[g.uuid] = s
		}
		p.mu.Unlock()
	}
}

// has reports whether uuid is still sampled. Under mu.
func (p *pcieSampler) has(uuid string) bool {
	for _, g := range p.gpus {
		if g.uuid == uuid {
			return true
		}
	}
	return false
}

// samplePCIe takes one sample of both directions (NVML: KB/s).
func samplePCIe(h nvml.Device) pcieSample {
	var s pcieSample
	for _, x := range []struct {
		c   nvml.PcieUtilCounter
		dst *Opt[float64]
		ret *nvml.Return
	}{{nvml.PCIE_UTIL_TX_BYTES, &s.tx, &s.txRet}, {nvml.PCIE_UTIL_RX_BYTES, &s.rx, &s.rxRet}} {
		kb, ret := h.GetPcieThroughput(x.c)
		*x.ret = ret
		if ret == nvml.SUCCESS {
			*x.dst = some(float64(kb) * 1024)
		}
	}
	return s
}

// read returns GPU uuid's latest sample. A GPU the sampler does not know
// yet (its handle failed at Open) is added with handle h, to be sampled
// from the next round on; until then it has no sample (ok false: absent,
// no error).
func (p *pcieSampler) read(index int, uuid string, h nvml.Device) (pcieSample, bool) {
	if p == nil {
		return pcieSample{}, false
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	s, ok := p.latest[uuid]
	if !ok && !p.has(uuid) {
		p.gpus = append(p.gpus, pcieGPU{index: index, uuid: uuid, h: h})
	}
	return s, ok
}

// drop stops sampling GPU index (fallen off the bus) and forgets its
// sample.
func (p *pcieSampler) drop(index int) {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	for i, g := range p.gpus {
		if g.index == index {
			delete(p.latest, g.uuid)
			p.gpus = append(p.gpus[:i], p.gpus[i+1:]...)
			return
		}
	}
}

// stop cancels the sampler and waits for it to finish its current call,
// at most stopWait; it reports whether the sampler ended.
func (p *pcieSampler) stop() bool { return cancelAndWait(p.cancel, p.done) }
