package discover

import (
	"encoding/binary"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"sync"
	"syscall"
)

// Diag lists listening sockets through the kernel's sock_diag netlink interface
// (NETLINK_SOCK_DIAG, inet_diag_req_v2 with idiag_states = LISTEN), the interface `ss` uses.
// The kernel filters by state and walks only its listening hash, where /proc/net/tcp walks
// every bucket of the established hash for every read: on a large node that is ~2 ms per read
// even in a Pod with three sockets, 2 % of a core at a 100 ms poll. Diag costs a few µs then.
//
// The messages are the kernel's fixed binary ABI (linux/inet_diag.h); the netlink framing is
// the standard library's (syscall.ParseNetlinkMessage).
type Diag struct {
	mu   sync.Mutex
	fd   int
	seq  uint32
	buf  []byte
	hint int // sockets listed last time, to size the next list
}

// Kernel ABI constants and sizes (linux/inet_diag.h, linux/sock_diag.h).
const (
	sockDiagByFamily = 20 // SOCK_DIAG_BY_FAMILY
	netlinkSockDiag  = 4  // NETLINK_SOCK_DIAG
	sizeofReqV2      = 56 // struct inet_diag_req_v2
	sizeofDiagMsg    = 72 // struct inet_diag_msg
)

// OpenDiag opens a sock_diag netlink socket and checks that the kernel answers it (gVisor and
// some seccomp profiles do not).
func OpenDiag() (*Diag, error) {
	fd, err := syscall.Socket(syscall.AF_NETLINK, syscall.SOCK_DGRAM|syscall.SOCK_CLOEXEC, netlinkSockDiag)
	if err != nil {
		return nil, os.NewSyscallError("socket(AF_NETLINK, NETLINK_SOCK_DIAG)", err)
	}
	if err := syscall.Bind(fd, &syscall.SockaddrNetlink{Family: syscall.AF_NETLINK}); err != nil {
		_ = syscall.Close(fd)
		return nil, os.NewSyscallError("bind", err)
	}
	d := &Diag{fd: fd, buf: make([]byte, 32<<10)}
	if _, err := d.dump(syscall.AF_INET, nil, nil); err != nil {
		_ = syscall.Close(fd)
		return nil, err
	}
	return d, nil
}

// Name says which interface lists the sockets.
func (d *Diag) Name() string { return "sock_diag" }

// Close releases the netlink socket.
func (d *Diag) Close() error { return syscall.Close(d.fd) }

// Listening returns the listening sockets (IPv4 then IPv6).
func (d *Diag) Listening() ([]Socket, error) {
	out, err := d.dump(syscall.AF_INET, make([]Socket, 0, d.hint+d.hint/8), nil)
	if err != nil {
		return nil, err
	}
	all, err := d.dump(syscall.AF_INET6, out, nil)
	if errors.Is(err, syscall.EAFNOSUPPORT) || errors.Is(err, syscall.ENOENT) {
		all, err = out, nil // kernel without IPv6
	}
	if err != nil {
		return nil, err
	}
	d.hint = len(all)
	return all, nil
}

// StillListening reports whether s's inode is still a listening socket. A socket from this
// source carries the kernel's cookie (unique for the boot): one exact lookup answers, however
// many sockets the namespace has. Without a cookie, or when the lookup finds another socket
// on the port (SO_REUSEPORT groups), the family's listening sockets are listed instead.
func (d *Diag) StillListening(s Socket) (bool, error) {
	if s.cookie != 0 {
		found, err := d.lookup(s)
		if err == nil && found {
			return true, nil
		}
	}
	family := syscall.AF_INET
	if s.V6 {
		family = syscall.AF_INET6
	}
	found := false
	_, err := d.dump(family, nil, func(x Socket) bool {
		if x.Inode == s.Inode && x.Port == s.Port {
			found = true
			return false
		}
		return true
	})
	if s.V6 && (errors.Is(err, syscall.EAFNOSUPPORT) || errors.Is(err, syscall.ENOENT)) {
		return false, nil
	}
	return found, err
}

// lookup asks the kernel for exactly s (address, port, interface, cookie).
func (d *Diag) lookup(s Socket) (bool, error) {
	family := syscall.AF_INET
	if s.V6 {
		family = syscall.AF_INET6
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	d.seq++
	seq := d.seq
	req := d.request(family, syscall.NLM_F_REQUEST, seq)
	r := req[syscall.NLMSG_HDRLEN:]
	binary.NativeEndian.PutUint32(r[4:], ^uint32(0)) // any state: the answer says which
	id := r[8:56]
	binary.BigEndian.PutUint16(id[0:2], uint16(s.Port))
	if s.V6 {
		a := s.IP.As16()
		copy(id[4:20], a[:])
	} else {
		a := s.IP.As4()
		copy(id[4:8], a[:])
	}
	binary.NativeEndian.PutUint32(id[36:40], s.ifIndex)
	binary.NativeEndian.PutUint32(id[40:44], uint32(s.cookie))
	binary.NativeEndian.PutUint32(id[44:48], uint32(s.cookie>>32))
	if err := syscall.Sendto(d.fd, req, 0, &syscall.SockaddrNetlink{Family: syscall.AF_NETLINK}); err != nil {
		return false, os.NewSyscallError("sendto", err)
	}
	for {
		n, _, err := syscall.Recvfrom(d.fd, d.buf, 0)
		if err != nil {
			if err == syscall.EINTR {
				continue
			}
			return false, os.NewSyscallError("recvfrom", err)
		}
		var (
			found, answered bool
		)
		err = eachMessage(d.buf[:n], seq, func(typ uint16, data []byte) (bool, error) {
			switch typ {
			case syscall.NLMSG_ERROR:
				answered = true
				if len(data) >= 4 {
					switch errno := syscall.Errno(-int32(binary.NativeEndian.Uint32(data))); errno {
					case 0, syscall.ENOENT, syscall.ESTALE: // gone, or another socket now
					default:
						return false, fmt.Errorf("sock_diag: %w", errno)
					}
				}
				return false, nil
			case sockDiagByFamily:
				answered = true
				if len(data) < sizeofDiagMsg {
					return false, fmt.Errorf("sock_diag: short message (%d bytes)", len(data))
				}
				x := parseDiagMsg(data)
				found = data[1] == tcpListen && x.Inode == s.Inode && x.Port == s.Port
				return false, nil
			}
			return true, nil
		})
		if err != nil || answered {
			return found, err
		}
	}
}

func (d *Diag) request(family int, flags uint16, seq uint32) []byte {
	req := make([]byte, syscall.NLMSG_HDRLEN+sizeofReqV2)
	binary.NativeEndian.PutUint32(req[0:], uint32(len(req)))
	binary.NativeEndian.PutUint16(req[4:], sockDiagByFamily)
	binary.NativeEndian.PutUint16(req[6:], flags)
	binary.NativeEndian.PutUint32(req[8:], seq)
	r := req[syscall.NLMSG_HDRLEN:]
	r[0] = byte(family)
	r[1] = syscall.IPPROTO_TCP
	return req
}

// dump asks for the family's listening TCP sockets and appends them to out. With a non-nil
// each it calls it per socket instead (false: stop looking, the dump is still drained).
func (d *Diag) dump(family int, out []Socket, each func(Socket) bool) ([]Socket, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.seq++
	seq := d.seq
	req := d.request(family, syscall.NLM_F_REQUEST|syscall.NLM_F_DUMP, seq)
	binary.NativeEndian.PutUint32(req[syscall.NLMSG_HDRLEN+4:], 1<<tcpListen) // idiag_states
	if err := syscall.Sendto(d.fd, req, 0, &syscall.SockaddrNetlink{Family: syscall.AF_NETLINK}); err != nil {
		return nil, os.NewSyscallError("sendto", err)
	}
	for {
		n, _, err := syscall.Recvfrom(d.fd, d.buf, 0)
		if err != nil {
			if err == syscall.EINTR {
				continue
			}
			return nil, os.NewSyscallError("recvfrom", err)
		}
		done := false
		err = eachMessage(d.buf[:n], seq, func(typ uint16, data []byte) (bool, error) {
			switch typ {
			case syscall.NLMSG_DONE:
				done = true
				return false, nil
			case syscall.NLMSG_ERROR:
				done = true
				if len(data) >= 4 {
					if errno := -int32(binary.NativeEndian.Uint32(data)); errno != 0 {
						return false, fmt.Errorf("sock_diag: %w", syscall.Errno(errno))
					}
				}
				return false, nil
			case sockDiagByFamily:
				if len(data) < sizeofDiagMsg {
					return false, fmt.Errorf("sock_diag: short message (%d bytes)", len(data))
				}
				s := parseDiagMsg(data)
				if s.Inode == 0 { // a socket being torn down
					return true, nil
				}
				if each == nil {
					out = append(out, s)
				} else if !each(s) {
					each = func(Socket) bool { return false }
				}
			}
			return true, nil
		})
		if err != nil {
			return nil, err
		}
		if done {
			return out, nil
		}
	}
}

// eachMessage walks the netlink messages in b (struct nlmsghdr: len, type, flags, seq, pid,
// then the payload, each aligned to 4 bytes) that answer request seq, until fn says stop.
func eachMessage(b []byte, seq uint32, fn func(typ uint16, data []byte) (bool, error)) error {
	for len(b) >= syscall.NLMSG_HDRLEN {
		l := int(binary.NativeEndian.Uint32(b[0:4]))
		if l < syscall.NLMSG_HDRLEN || l > len(b) {
			return fmt.Errorf("sock_diag: malformed message (length %d of %d)", l, len(b))
		}
		if binary.NativeEndian.Uint32(b[8:12]) == seq { // else an answer to an abandoned request
			more, err := fn(binary.NativeEndian.Uint16(b[4:6]), b[syscall.NLMSG_HDRLEN:l])
			if err != nil || !more {
				return err
			}
		}
		b = b[min((l+syscall.NLMSG_ALIGNTO-1)&^(syscall.NLMSG_ALIGNTO-1), len(b)):]
	}
	return nil
}

// parseDiagMsg reads struct inet_diag_msg: family, state, timer, retrans, then the
// inet_diag_sockid (sport, dport big-endian; src, dst 16 bytes each; if; cookie[2]), then
// expires, rqueue, wqueue, uid, inode.
func parseDiagMsg(b []byte) Socket {
	family := b[0]
	id := b[4:52]
	s := Socket{
		Port:    int(binary.BigEndian.Uint16(id[0:2])),
		Inode:   uint64(binary.NativeEndian.Uint32(b[68:72])),
		V6:      family == syscall.AF_INET6,
		ifIndex: binary.NativeEndian.Uint32(id[36:40]),
		cookie:  uint64(binary.NativeEndian.Uint32(id[40:44])) | uint64(binary.NativeEndian.Uint32(id[44:48]))<<32,
	}
	if s.V6 {
		s.IP = netip.AddrFrom16([16]byte(id[4:20]))
	} else {
		s.IP = netip.AddrFrom4([4]byte(id[4:8]))
	}
	return s
}
