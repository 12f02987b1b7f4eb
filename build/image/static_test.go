package main

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestCheckStatic(t *testing.T) {
	if err := checkStatic("/bin/sh"); err == nil || !strings.Contains(err.Error(), "dynamically linked") {
		t.Errorf("checkStatic(/bin/sh) = %v, want a dynamic-linking error", err)
	}
	notELF := filepath.Join(t.TempDir(), "script")
	if err := os.WriteFile(notELF, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := checkStatic(notELF); err == nil {
		t.Error("checkStatic accepted a shell script")
	}
	static := filepath.Join(t.TempDir(), "static")
	if err := os.WriteFile(static, staticELF(), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := checkStatic(static); err != nil {
		t.Errorf("checkStatic(ELF without an interpreter) = %v", err)
	}
}

// staticELF is the smallest x86-64 executable header debug/elf reads: no
// program headers, so no interpreter.
func staticELF() []byte {
	h := make([]byte, 64)
	copy(h, []byte{0x7f, 'E', 'L', 'F', 2, 1, 1})
	le := binary.LittleEndian
	le.PutUint16(h[16:], 2)  // ET_EXEC
	le.PutUint16(h[18:], 62) // EM_X86_64
	le.PutUint32(h[20:], 1)  // EV_CURRENT
	le.PutUint16(h[52:], 64) // e_ehsize
	le.PutUint16(h[54:], 56) // e_phentsize
	le.PutUint16(h[58:], 64) // e_shentsize
	return h
}
