// Package safefile creates the files gopmd's commands write (captures,
// profiles, dumps) the way a root process in a shared directory must: a
// final symbolic link is never followed, an existing file is never
// replaced unless the caller says so, and only a regular file is ever
// replaced.
//
// A process running as root that opens "out.pcap" with os.Create in a
// directory others can write follows a link planted there and truncates
// whatever it points at (fs.protected_symlinks, where it is on, only
// covers sticky world-writable directories). Create closes that door.
package safefile

import (
	"errors"
	"fmt"
	"io/fs"
	"os"

	"golang.org/x/sys/unix"
)

// Errors Create wraps; test them with errors.Is.
var (
	// ErrExists: the file exists and overwriting was not allowed.
	ErrExists = errors.New("already exists")
	// ErrSymlink: the path's last component is a symbolic link.
	ErrSymlink = errors.New("is a symbolic link")
	// ErrNotRegular: the path names a directory, device, FIFO or socket.
	ErrNotRegular = errors.New("is not a regular file")
)

// Options say how Create may treat an existing file.
type Options struct {
	// Overwrite allows replacing an existing regular file (truncated to
	// zero). Without it an existing file is an error.
	Overwrite bool
	// OverwriteHint names the way the user allows overwriting (such as
	// "--force" or "pcap-overwrite=1"); the ErrExists message offers it.
	OverwriteHint string
	// Perm is the mode of a new file before the umask (0644 when zero).
	Perm fs.FileMode
}

// Error is a file Create refused or failed to open.
type Error struct {
	Path string
	Err  error  // ErrExists, ErrSymlink, ErrNotRegular or the system error
	Fix  string // what to do about it
}

// Error names the file, what went wrong and what to do.
func (e *Error) Error() string {
	msg := fmt.Sprintf("output file %s: %v", e.Path, e.Err)
	if e.Fix != "" {
		msg += " (" + e.Fix + ")"
	}
	return msg
}

// Unwrap returns Err, for errors.Is.
func (e *Error) Unwrap() error { return e.Err }

// Create opens path for writing: a new file (O_CREAT|O_EXCL) unless
// o.Overwrite, in which case an existing regular file is truncated. The
// last path component is opened with O_NOFOLLOW, so a symbolic link there
// is an error, never followed; an existing path that is not a regular file
// (a device, a FIFO) is refused before anything is written to it.
func Create(path string, o Options) (*os.File, error) {
	if path == "" {
		return nil, &Error{Path: `""`, Err: errors.New("empty path"), Fix: "give a file name"}
	}
	perm := o.Perm
	if perm == 0 {
		perm = 0o644
	}
	flags := unix.O_WRONLY | unix.O_CREAT | unix.O_NOFOLLOW | unix.O_CLOEXEC
	if !o.Overwrite {
		flags |= unix.O_EXCL
	} else {
		// A FIFO with no reader would block the open; refuse it instead.
		flags |= unix.O_NONBLOCK
	}
	fd, err := unix.Open(path, flags, uint32(perm.Perm()))
	if err != nil {
		return nil, classify(path, err, o)
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		unix.Close(fd)
		return nil, &Error{Path: path, Err: err}
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG {
		unix.Close(fd)
		return nil, &Error{Path: path, Err: ErrNotRegular, Fix: "give the path of a regular file to create"}
	}
	if o.Overwrite {
		if err := unix.Ftruncate(fd, 0); err != nil {
			unix.Close(fd)
			return nil, &Error{Path: path, Err: err}
		}
		if err := clearNonblock(fd); err != nil {
			unix.Close(fd)
			return nil, &Error{Path: path, Err: err}
		}
	}
	return os.NewFile(uintptr(fd), path), nil
}

func clearNonblock(fd int) error {
	fl, err := unix.FcntlInt(uintptr(fd), unix.F_GETFL, 0)
	if err != nil {
		return err
	}
	_, err = unix.FcntlInt(uintptr(fd), unix.F_SETFL, fl&^unix.O_NONBLOCK)
	return err
}

// classify turns an open error into an Error that says what to do.
func classify(path string, err error, o Options) error {
	switch {
	case errors.Is(err, unix.EEXIST):
		fix := "remove it or choose another name"
		if o.OverwriteHint != "" {
			fix += ", or allow overwriting it with " + o.OverwriteHint
		}
		// O_EXCL also fails on a dangling or live link: say which.
		if fi, lerr := os.Lstat(path); lerr == nil && fi.Mode()&fs.ModeSymlink != 0 {
			return &Error{Path: path, Err: ErrSymlink, Fix: "refusing to follow it: name the file itself, or remove the link"}
		}
		return &Error{Path: path, Err: ErrExists, Fix: fix}
	case errors.Is(err, unix.ELOOP):
		return &Error{Path: path, Err: ErrSymlink, Fix: "refusing to follow it: name the file itself, or remove the link"}
	case errors.Is(err, unix.ENXIO), errors.Is(err, unix.EISDIR):
		return &Error{Path: path, Err: ErrNotRegular, Fix: "give the path of a regular file to create"}
	case errors.Is(err, unix.ENOENT):
		return &Error{Path: path, Err: fs.ErrNotExist, Fix: "its directory does not exist: create it or give another path"}
	case errors.Is(err, unix.EACCES), errors.Is(err, unix.EPERM), errors.Is(err, unix.EROFS):
		return &Error{Path: path, Err: err, Fix: "give a path this user can write"}
	}
	return &Error{Path: path, Err: err, Fix: "give a writable path"}
}
