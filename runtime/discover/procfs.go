package discover

import (
	"errors"
	"io/fs"
	"net/netip"

	"github.com/prometheus/procfs"
)

// Table reads the listening sockets from /proc/net/tcp and tcp6 through procfs.
type Table struct {
	fs procfs.FS
}

// NewTable reads procfs at root ("" = /proc). Tests pass a directory holding net/tcp and
// net/tcp6 files.
func NewTable(root string) (*Table, error) {
	if root == "" {
		root = procfs.DefaultMountPoint
	}
	pfs, err := procfs.NewFS(root)
	if err != nil {
		return nil, err
	}
	return &Table{fs: pfs}, nil
}

// Name says which interface lists the sockets.
func (t *Table) Name() string { return "procfs" }

func (t *Table) read(v6 bool) (procfs.NetTCP, error) {
	var (
		lines procfs.NetTCP
		err   error
	)
	// procfs deprecates these for netlink, which is the primary reader here (diag_linux.go);
	// this is the fallback for kernels or sandboxes without sock_diag.
	if v6 {
		//lint:ignore SA1019 fallback reader, see above
		lines, err = t.fs.NetTCP6()
		if errors.Is(err, fs.ErrNotExist) { // kernel without IPv6
			return nil, nil
		}
	} else {
		//lint:ignore SA1019 fallback reader, see above
		lines, err = t.fs.NetTCP()
	}
	return lines, err
}

// Listening returns the listening sockets (IPv4 then IPv6).
func (t *Table) Listening() ([]Socket, error) {
	var out []Socket
	for _, v6 := range []bool{false, true} {
		lines, err := t.read(v6)
		if err != nil {
			return nil, err
		}
		for _, l := range lines {
			if l.St == tcpListen {
				ip, _ := netip.AddrFromSlice(l.LocalAddr)
				out = append(out, Socket{Inode: l.Inode, Port: int(l.LocalPort), IP: ip, V6: v6})
			}
		}
	}
	return out, nil
}

// StillListening reports whether s's inode is still a listening socket, reading only the
// table of its family.
func (t *Table) StillListening(s Socket) (bool, error) {
	lines, err := t.read(s.V6)
	if err != nil {
		return false, err
	}
	for _, l := range lines {
		if l.Inode == s.Inode && l.St == tcpListen && int(l.LocalPort) == s.Port {
			return true, nil
		}
	}
	return false, nil
}
