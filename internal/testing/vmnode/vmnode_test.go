// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

//go:build linux

package vmnode

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// KVM only with a hardware virtualisation flag; this machine's PVM
// /dev/kvm has none and cannot run a stock guest.
func TestHasVirtFlag(t *testing.T) {
	assert.True(t, hasVirtFlag("processor\t: 0\nflags\t\t: fpu vme vmx sse\n"))
	assert.True(t, hasVirtFlag("flags\t\t: fpu svm\n"))
	assert.False(t, hasVirtFlag("flags\t\t: fpu vme sse4_2 hypervisor\nbugs\t\t: vmx_x\n"), "vmx only as a whole flag of the flags line")
	assert.False(t, hasVirtFlag(""))
}

func TestParseCandidate(t *testing.T) {
	assert.Equal(t, "6.1.192-2", parseCandidate("linux-image-amd64:\n  Installed: (none)\n  Candidate: 6.1.192-2\n  Version table:\n     6.1.192-2 500\n"))
	assert.Empty(t, parseCandidate("foo:\n  Installed: (none)\n  Candidate: (none)\n"), "no candidate: apt lists missing")
	assert.Empty(t, parseCandidate(""))
}
