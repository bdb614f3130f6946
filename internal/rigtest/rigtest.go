// Package rigtest holds what the kernel-rig tests share on both sides of
// a rig: the host test reading the figures its guest printed, the guest
// reading the rig's configuration, and the median of timed rounds.
package rigtest

import (
	"os"
	"slices"
	"strconv"
	"strings"
)

// Conf reads /rig.conf, the KEY=VALUE lines a rig's initramfs carries;
// nil outside a rig.
func Conf() map[string]string { return confAt("/rig.conf") }

func confAt(path string) map[string]string {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	conf := map[string]string{}
	for _, l := range strings.Split(string(b), "\n") {
		if k, v, ok := strings.Cut(l, "="); ok {
			conf[strings.TrimSpace(k)] = strings.Trim(strings.TrimSpace(v), `"`)
		}
	}
	return conf
}

// Figures reads the first line of out tagged "INFO <tag>:" as key=value
// figures. It is ok only if the line is there and every key in need is a
// positive number.
func Figures(out, tag string, need ...string) (map[string]float64, bool) {
	_, line, found := strings.Cut(out, "INFO "+tag+":")
	if !found {
		return nil, false
	}
	line, _, _ = strings.Cut(line, "\n")
	f := map[string]float64{}
	for _, kv := range strings.Fields(line) {
		k, v, _ := strings.Cut(kv, "=")
		if x, err := strconv.ParseFloat(v, 64); err == nil {
			f[k] = x
		}
	}
	for _, k := range need {
		if f[k] <= 0 {
			return nil, false
		}
	}
	return f, true
}

// Median is the median of v (v is not reordered); 0 for none.
func Median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := slices.Clone(v)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}
