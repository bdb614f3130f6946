package xdp

import (
	"bufio"
	"bytes"
	"os"
	"strconv"
	"strings"
)

// Holder is a process that holds a descriptor of an XDP program: a
// running port's process holds its steering program; a program that no
// process holds was left attached by a run that ended without detaching
// it (killed with SIGKILL, or crashed).
type Holder struct {
	PID  int
	Comm string // the process's command name (/proc/PID/comm)
}

func (h Holder) String() string { return strconv.Itoa(h.PID) + " (" + h.Comm + ")" }

// progHolders lists the processes with a descriptor of program id, from
// the prog_id line the kernel writes in the fdinfo of a BPF program's
// descriptor. ok is false when /proc cannot be read (then nothing is
// known of the holders).
func progHolders(id uint32) (hs []Holder, ok bool) {
	procs, err := os.ReadDir("/proc")
	if err != nil {
		return nil, false
	}
	want := []byte("prog_id:\t" + strconv.FormatUint(uint64(id), 10))
	for _, pe := range procs {
		pid, err := strconv.Atoi(pe.Name())
		if err != nil {
			continue
		}
		dir := "/proc/" + pe.Name() + "/fdinfo/"
		fds, err := os.ReadDir(dir)
		if err != nil {
			continue // gone, or a kernel thread
		}
		for _, fe := range fds {
			if holdsProg(dir+fe.Name(), want) {
				comm, _ := os.ReadFile("/proc/" + pe.Name() + "/comm")
				hs = append(hs, Holder{PID: pid, Comm: strings.TrimSpace(string(comm))})
				break
			}
		}
	}
	return hs, true
}

// holdsProg reports whether the fdinfo file at path has the line want.
func holdsProg(path string, want []byte) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if bytes.Equal(sc.Bytes(), want) {
			return true
		}
	}
	return false
}

func holderList(hs []Holder) string {
	s := make([]string, len(hs))
	for i, h := range hs {
		s[i] = h.String()
	}
	return strings.Join(s, ", ")
}
