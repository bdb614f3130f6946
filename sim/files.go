package sim

import (
	"fmt"
	"os"
	"sync"
	"syscall"
)

// The pcap files open in the process, by identity (device and inode, so a
// symbolic or hard link to the same file is the same file): a pcap-out
// that named the file a pcap-in replays would truncate the capture before
// a frame of it was read, and a pcap-in of the file a pcap-out writes
// would read a capture while it is being written. Both are refused,
// whatever the flags.

// fileID is a file's identity.
type fileID struct{ dev, ino uint64 }

// pcapFile is one use of an open pcap file: which option of which port.
type pcapFile struct {
	use   string // "pcap-in of sim:enetc0"
	path  string
	write bool
}

var (
	pcapFilesMu sync.Mutex
	pcapFiles   = map[fileID][]*pcapFile{}
)

// idOf is the identity of the file fi describes.
func idOf(fi os.FileInfo) (fileID, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return fileID{}, false
	}
	return fileID{dev: uint64(st.Dev), ino: uint64(st.Ino)}, true
}

// conflict says why a use of the file id (write or read) clashes with
// its uses so far, or nil: readers share a file, a writer shares it with
// nobody. pcapFilesMu held.
func conflict(id fileID, path string, write bool) error {
	for _, u := range pcapFiles[id] {
		if write || u.write {
			return fmt.Errorf("%s is the file %s uses (%s: the same file): one file cannot be both replayed and written, or written twice; name another file", path, u.use, u.path)
		}
	}
	return nil
}

// pcapClash says, before a file is opened for reading or created (or
// truncated) for writing, whether the file already at path is one whose
// use by an open port's pcap option clashes; nil when path does not exist
// or nothing clashes.
func pcapClash(path string, write bool) error {
	fi, err := os.Stat(path) // follows a link: its target is the file at risk
	if err != nil {
		return nil
	}
	id, ok := idOf(fi)
	if !ok {
		return nil
	}
	pcapFilesMu.Lock()
	defer pcapFilesMu.Unlock()
	return conflict(id, path, write)
}

// claimPcapFile records that use reads (or writes) the open file f,
// named path, or says whose use it clashes with. It returns the function
// that gives the claim back.
func claimPcapFile(f interface{ Stat() (os.FileInfo, error) }, path, use string, write bool) (release func() error, err error) {
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	id, ok := idOf(fi)
	if !ok {
		return func() error { return nil }, nil
	}
	pcapFilesMu.Lock()
	defer pcapFilesMu.Unlock()
	if err := conflict(id, path, write); err != nil {
		return nil, err
	}
	u := &pcapFile{use: use, path: path, write: write}
	pcapFiles[id] = append(pcapFiles[id], u)
	return func() error {
		pcapFilesMu.Lock()
		defer pcapFilesMu.Unlock()
		l := pcapFiles[id]
		for i, x := range l {
			if x == u {
				l = append(l[:i], l[i+1:]...)
				break
			}
		}
		if len(l) == 0 {
			delete(pcapFiles, id)
		} else {
			pcapFiles[id] = l
		}
		return nil
	}, nil
}

// OutputClash says whether path names a file an open simulated port's
// pcap option reads or writes (by identity: through any link), which an
// output file of the caller's (l2fwd's --capture) must never replace; nil
// when it does not, or does not exist.
func OutputClash(path string) error { return pcapClash(path, true) }
