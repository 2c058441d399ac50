// Package install copies the running sparkui-runtime binary to the volume it shares with the
// driver container, whose preStop hook runs that copy: the Spark image has none of its own.
package install

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
)

// Self copies the running binary to dst (mode 0755, atomically: temp file and rename) so
// another container sharing the volume can run it. An identical copy is left alone.
func Self(dst string) error {
	src, err := os.Executable()
	if err != nil {
		return err
	}
	return installFile(src, dst)
}

func installFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	if same, err := sameContent(in, dst); err != nil {
		return err
	} else if same {
		return nil
	}
	tmp, err := os.CreateTemp(filepath.Dir(dst), "."+filepath.Base(dst)+".tmp-")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	// Streamed (copy_file_range where the kernel can): the binary never sits in the heap.
	if _, err := io.Copy(tmp, in); err != nil {
		_ = tmp.Close()
		return err
	}
	if err := tmp.Chmod(0o755); err != nil {
		_ = tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		_ = tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), dst)
}

// sameContent reports whether dst exists with mode 0755 and in's content; in is rewound.
func sameContent(in *os.File, dst string) (bool, error) {
	defer func() { _, _ = in.Seek(0, io.SeekStart) }()
	out, err := os.Open(dst)
	if err != nil {
		return false, nil
	}
	defer out.Close()
	si, err1 := in.Stat()
	so, err2 := out.Stat()
	if err1 != nil || err2 != nil || si.Size() != so.Size() || so.Mode().Perm() != 0o755 {
		return false, nil
	}
	a, b := make([]byte, 64<<10), make([]byte, 64<<10)
	for {
		n, errA := io.ReadFull(in, a)
		m, errB := io.ReadFull(out, b)
		if n != m || !bytes.Equal(a[:n], b[:m]) {
			return false, nil
		}
		if errA == io.EOF || errA == io.ErrUnexpectedEOF {
			return errB == errA, nil
		}
		if errA != nil {
			return false, errA
		}
		if errB != nil {
			return false, nil
		}
	}
}
