// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

package procnet

import (
	"net"
	"testing"
)

// A /proc/net/tcp and tcp6 table as this kernel prints it: only LISTEN
// sockets whose inode is the process's count.
func TestParseListeners(t *testing.T) {
	tcp := `  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
   0: 0100007F:A411 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 111 1 0000000000000000 100 0 0 10 0
   1: 00000000:0016 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 222 1 0000000000000000 100 0 0 10 0
   2: 0100007F:A411 0100007F:C350 01 00000000:00000000 00:00000000 00000000     0        0 333 1 0000000000000000 20 4 30 10 -1
   3: 0100007F:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 444 1 0000000000000000 100 0 0 10 0
`
	got, err := parseListeners([]byte(tcp), map[string]bool{"111": true, "333": true, "444": true})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0] != "127.0.0.1:42001" || got[1] != "127.0.0.1:8080" {
		t.Errorf("tcp: got %v, want [127.0.0.1:42001 127.0.0.1:8080]", got)
	}
	tcp6 := `  sl  local_address                         remote_address                        st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
   0: 00000000000000000000000000000000:1A0B 00000000000000000000000000000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 555 1 0000000000000000 100 0 0 10 0
   1: 0000000000000000FFFF00000100007F:1A0C 00000000000000000000000000000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 666 1 0000000000000000 100 0 0 10 0
`
	got, err = parseListeners([]byte(tcp6), map[string]bool{"555": true, "666": true})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0] != "[::]:6667" || got[1] != "127.0.0.1:6668" {
		t.Errorf("tcp6: got %v, want [[::]:6667 127.0.0.1:6668]", got)
	}
	if _, err := parseListeners([]byte("header\n 0: 0100007F\n"), nil); err == nil {
		t.Error("a short line parsed")
	}
}

func FuzzParseListeners(f *testing.F) {
	f.Add([]byte("h\n 0: 0100007F:A411 00000000:0000 0A 0:0 0:0 0 0 0 111 1\n"), "111")
	f.Add([]byte("h\n 0: 0000000000000000FFFF00000100007F:1A0C 0:0 0A 0:0 0:0 0 0 0 9 1\n"), "9")
	f.Fuzz(func(t *testing.T, b []byte, inode string) {
		addrs, err := parseListeners(b, map[string]bool{inode: true})
		if err != nil {
			return
		}
		for _, a := range addrs {
			if _, _, err := net.SplitHostPort(a); err != nil {
				t.Errorf("%q: %v", a, err)
			}
		}
	})
}
