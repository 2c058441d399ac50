//go:build !linux

package discover

import "errors"

// Diag is the sock_diag source, Linux only.
type Diag struct{}

// OpenDiag fails outside Linux.
func OpenDiag() (*Diag, error) { return nil, errors.New("sock_diag needs Linux") }

func (d *Diag) Name() string                        { return "sock_diag" }
func (d *Diag) Close() error                        { return nil }
func (d *Diag) Listening() ([]Socket, error)        { return nil, errors.ErrUnsupported }
func (d *Diag) StillListening(Socket) (bool, error) { return false, errors.ErrUnsupported }
