// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

//go:build realmachine

package archgolden

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
)

type elfMachine = elf.Machine

const (
	elfX8664   = elf.EM_X86_64
	elfAArch64 = elf.EM_AARCH64
)

func machineOf(path string) (elf.Machine, error) {
	f, err := elf.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	return f.Machine, nil
}

// checkLazy fails when the ELF executable at path asks the loader for
// immediate binding, or when a dynamic symbol whose name starts with prefix
// is defined in it or relocated other than through the PLT (a JUMP_SLOT
// relocation of .rela.plt, resolved at its first call under lazy binding;
// any other relocation is resolved at load). It returns how many such
// symbols it found.
func checkLazy(path, prefix string) (int, error) { //nolint:unparam // the call names the library whose symbols must bind lazily
	f, err := elf.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	if f.Class != elf.ELFCLASS64 {
		return 0, fmt.Errorf("%s: not a 64-bit ELF file", path)
	}
	var jumpSlot uint32
	switch f.Machine {
	case elf.EM_X86_64:
		jumpSlot = uint32(elf.R_X86_64_JMP_SLOT)
	case elf.EM_AARCH64:
		jumpSlot = uint32(elf.R_AARCH64_JUMP_SLOT)
	default:
		return 0, fmt.Errorf("%s: machine %s", path, f.Machine)
	}

	var now []string
	if v, _ := f.DynValue(elf.DT_BIND_NOW); len(v) > 0 {
		now = append(now, "DT_BIND_NOW")
	}
	if v, _ := f.DynValue(elf.DT_FLAGS); len(v) > 0 && v[0]&uint64(elf.DF_BIND_NOW) != 0 {
		now = append(now, "DT_FLAGS BIND_NOW")
	}
	if v, _ := f.DynValue(elf.DT_FLAGS_1); len(v) > 0 && v[0]&uint64(elf.DF_1_NOW) != 0 {
		now = append(now, "DT_FLAGS_1 NOW")
	}
	if len(now) > 0 {
		return 0, fmt.Errorf("%s: immediate binding (%s): every undefined symbol is resolved at load", path, strings.Join(now, ", "))
	}

	syms, err := f.DynamicSymbols()
	if err != nil {
		return 0, fmt.Errorf("%s: dynamic symbols: %w", path, err)
	}
	want := map[uint32]string{} // symbol index (DynamicSymbols skips index 0) -> name
	var errs []error
	for i, s := range syms {
		if !strings.HasPrefix(s.Name, prefix) {
			continue
		}
		want[uint32(i+1)] = s.Name
		if s.Section != elf.SHN_UNDEF {
			errs = append(errs, fmt.Errorf("%s is defined in the binary", s.Name))
		}
	}
	if len(want) == 0 {
		return 0, fmt.Errorf("%s: no dynamic symbol %s*", path, prefix)
	}
	plt := map[uint32]bool{}
	for _, sec := range f.Sections {
		if sec.Type != elf.SHT_RELA { //nolint:misspell // SHT_RELA: the ELF section type of relocations with addends
			continue
		}
		data, err := sec.Data()
		if err != nil {
			return 0, fmt.Errorf("%s: %s: %w", path, sec.Name, err)
		}
		var r elf.Rela64
		rd := bytes.NewReader(data)
		for rd.Len() > 0 {
			if err := binary.Read(rd, f.ByteOrder, &r); err != nil {
				return 0, fmt.Errorf("%s: %s: %w", path, sec.Name, err)
			}
			name, ok := want[elf.R_SYM64(r.Info)]
			if !ok {
				continue
			}
			if sec.Name != ".rela.plt" || elf.R_TYPE64(r.Info) != jumpSlot {
				errs = append(errs, fmt.Errorf("%s: relocation type %d in %s, resolved at load", name, elf.R_TYPE64(r.Info), sec.Name))
				continue
			}
			plt[elf.R_SYM64(r.Info)] = true
		}
	}
	for i, name := range want {
		if !plt[i] {
			errs = append(errs, fmt.Errorf("%s: no JUMP_SLOT relocation", name))
		}
	}
	if len(errs) > 0 {
		return 0, fmt.Errorf("%s: %w", path, errors.Join(errs...))
	}
	return len(want), nil
}
