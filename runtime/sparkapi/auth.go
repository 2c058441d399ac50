package sparkapi

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/textproto"
	"os"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Credential is a header the probes send to a UI behind an authentication filter
// (spark.ui.filters): read from a mounted file, and read again when the file changes.
type Credential struct {
	Path   string
	Bearer bool // the file holds a bearer token; otherwise one line "Name: value"

	mu     sync.Mutex
	stamp  fileStamp
	name   string
	value  string
	err    error
	loaded bool
}

// BearerFile is a credential sent as "Authorization: Bearer <the file's content>" (Spark's
// ui/JWSFilter.scala reads that header).
func BearerFile(path string) *Credential { return &Credential{Path: path, Bearer: true} }

// HeaderFile is a credential sent as the header line the file holds ("Name: value").
func HeaderFile(path string) *Credential { return &Credential{Path: path} }

// fileStamp tells a changed file from the same one without reading it. A Secret volume is
// updated by swapping a symlink (..data): the file Stat follows is a new inode.
type fileStamp struct {
	ino   uint64
	size  int64
	mtime time.Time
}

func stampOf(fi os.FileInfo) fileStamp {
	st := fileStamp{size: fi.Size(), mtime: fi.ModTime()}
	if sys, ok := fi.Sys().(*syscall.Stat_t); ok {
		st.ino = sys.Ino
	}
	return st
}

// maxCredential bounds what is read from the file.
const maxCredential = 64 << 10

// Header is the header to send: one stat per call, and the file is read again only when its
// stamp changed (Secret rotation), so a probe pass costs no read.
func (c *Credential) Header() (name, value string, err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	fi, err := os.Stat(c.Path)
	if err != nil {
		c.loaded = false
		return "", "", fmt.Errorf("credential file %s: %w", c.Path, err)
	}
	st := stampOf(fi)
	if c.loaded && st == c.stamp {
		return c.name, c.value, c.err
	}
	c.stamp, c.loaded = st, true
	c.name, c.value, c.err = c.read()
	return c.name, c.value, c.err
}

func (c *Credential) read() (string, string, error) {
	f, err := os.Open(c.Path)
	if err != nil {
		return "", "", fmt.Errorf("credential file %s: %w", c.Path, err)
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxCredential))
	if err != nil {
		return "", "", fmt.Errorf("credential file %s: %w", c.Path, err)
	}
	if c.Bearer {
		tok := strings.TrimSpace(string(b))
		if tok == "" || strings.ContainsAny(tok, "\r\n") {
			return "", "", fmt.Errorf("credential file %s: want one bearer token", c.Path)
		}
		return "Authorization", "Bearer " + tok, nil
	}
	line, err := firstLine(b)
	if err != nil {
		return "", "", fmt.Errorf("credential file %s: %w", c.Path, err)
	}
	name, value, ok := strings.Cut(line, ":")
	name, value = strings.TrimSpace(name), strings.TrimSpace(value)
	if !ok || name == "" || value == "" || !validHeaderName(name) {
		return "", "", fmt.Errorf("credential file %s: want one header line \"Name: value\"", c.Path)
	}
	return textproto.CanonicalMIMEHeaderKey(name), value, nil
}

func firstLine(b []byte) (string, error) {
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 0, 4096), maxCredential)
	for sc.Scan() {
		if l := strings.TrimSpace(sc.Text()); l != "" {
			return l, nil
		}
	}
	if err := sc.Err(); err != nil {
		return "", err
	}
	return "", errors.New("empty")
}

// validHeaderName: an RFC 9110 token.
func validHeaderName(s string) bool {
	for _, r := range s {
		if r <= ' ' || r >= 0x7f || strings.ContainsRune(`"(),/:;<=>?@[\]{}`, r) {
			return false
		}
	}
	return true
}
