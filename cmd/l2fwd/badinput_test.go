package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestBadInputTable runs l2fwd with bad input as a careless or hostile
// user would give it: malformed specs, unknown and repeated options,
// out-of-range values, hostile paths, bad pcaps, misuse. Each must exit 2
// with one line on stderr that names the thing at fault and the fix, and
// leave every file it was pointed at as it was.
func TestBadInputTable(t *testing.T) {
	dir := t.TempDir()
	victim := filepath.Join(dir, "root-only")
	os.WriteFile(victim, []byte("precious"), 0o600)
	link := filepath.Join(dir, "planted.pcap")
	os.Symlink(victim, link)
	old := filepath.Join(dir, "old.pcap")
	os.WriteFile(old, []byte("old"), 0o644)
	text := filepath.Join(dir, "notes.pcap")
	os.WriteFile(text, []byte("this is not a capture\n"), 0o644)
	empty := filepath.Join(dir, "empty.pcap")
	os.WriteFile(empty, nil, 0o644)
	missing := filepath.Join(dir, "missing.pcap")

	const e0 = "sim:enetc40"
	for _, tc := range []struct {
		args []string
		want []string // the thing, then the fix
	}{
		// Flags.
		{[]string{"--bogus"}, []string{"-bogus", "l2fwd -h"}},
		{[]string{"--burst", "0"}, []string{"--burst 0", "use 1 to 256"}},
		{[]string{"--burst", "257"}, []string{"--burst 257", "use 1 to 256"}},
		{[]string{"--burst", "many"}, []string{"-burst", "l2fwd -h"}},
		{[]string{"--queues", "65"}, []string{"--queues 65", "use 1 to 64"}},
		{[]string{"--ring-size", "4"}, []string{"--ring-size 4", "use 8 to 65536"}},
		{[]string{"--ring-size", "100000"}, []string{"--ring-size 100000", "use 8 to 65536"}},
		{[]string{"--duration", "-1s"}, []string{"--duration", "such as 10s"}},
		{[]string{"--duration", "soon"}, []string{"-duration", "l2fwd -h"}},
		{[]string{"--stats-interval", "-1s"}, []string{"--stats-interval", "0 for no table"}},
		{[]string{"--stats-interval", "1ns"}, []string{"--stats-interval 1ns", "too short", "100ms or more"}},
		{[]string{"--stats-interval", "99ms"}, []string{"--stats-interval 99ms", "100ms or more"}},
		{[]string{"--workers", "-1"}, []string{"--workers", "0 for one per port queue"}},
		{[]string{"--mode", "fly"}, []string{`mode "fly"`, "use fwd, drop, tx or pass"}},
		{[]string{"--metrics", "0.0.0.0:9464"}, []string{"--metrics", "--metrics-any"}},
		{[]string{"--metrics", "nonsense"}, []string{"--metrics", "host:port"}},
		{[]string{"--metrics", "127.0.0.1:99999"}, []string{"--metrics", "0 to 65535"}},
		{[]string{"--capture", old, "--mode", "pass"}, []string{"--capture", "--mode fwd or tx"}},
		{[]string{"--until-done", e0 + "?gen=1"}, []string{"port 0", "gen-count="}},
		{[]string{"--rx-mode", "napi"}, []string{`--rx-mode "napi"`, "poll", "adaptive"}},
		{[]string{"--rx-idle", "8"}, []string{"--rx-idle 8", "add --rx-mode adaptive"}},
		{[]string{"--rx-mode", "adaptive", "--rx-idle", "0"}, []string{"-rx-idle", "1 to 1000000"}},
		{[]string{"--rx-mode", "adaptive", "--rx-idle", "lots"}, []string{"-rx-idle", "not a number"}},
		{[]string{"--rx-mode", "adaptive", "--tap"}, []string{"--tap", "--rx-mode poll"}},
		{[]string{"--rx-mode", "adaptive", "sim:fec40", "sim:fec41"}, []string{"port 0 (sim:fec40)", "synchronous", "mode=engine"}},
		// Malformed specs and hostile names.
		{[]string{"bogus:thing"}, []string{`unknown scheme "bogus"`, "accepted forms"}},
		{[]string{"eth0"}, []string{`"eth0"`, "no scheme", "accepted forms"}},
		{[]string{"pci:01:00.0"}, []string{`"01:00.0"`, "e.g. 0000:00:00.0"}},
		{[]string{"platform:../../../../tmp/x"}, []string{"../../../../tmp/x", "give the node name only"}},
		{[]string{"platform:.."}, []string{`".."`, "accepted forms"}},
		{[]string{"platform:eth\x1b[2J"}, []string{"control character", "accepted forms"}},
		{[]string{"uio:/tmp/uio0"}, []string{`"/tmp/uio0"`, "/dev/uioN"}},
		{[]string{"sim:nope9"}, []string{`"nope9"`, "sim:<kind><N>", "enetc, enetc-timer, fec"}},
		{[]string{e0, e0}, []string{"sim:enetc40", "already open", "close it"}},
		// Unknown and repeated options.
		{[]string{e0 + "?gen=1&gen=0"}, []string{"option gen", "given 2 times", "give each option once"}},
		{[]string{e0 + "?mtu=1500&mtu=9000"}, []string{"option mtu", "given 2 times"}},
		{[]string{e0 + "?=1"}, []string{"option with no name", "key=value"}},
		{[]string{e0 + "?a=%zz"}, []string{"options", "invalid URL escape", "accepted forms"}},
		{[]string{e0 + "?soc=imx8mp"}, []string{"option soc", "unknown option", "accepted: ", "vf"}},
		{[]string{"sim:fec40?in-band=off"}, []string{"option in-band", "the fec driver", "accepted: ", "soc"}},
		{[]string{e0 + "?color=red"}, []string{"option color", "unknown option", "accepted: "}},
		// Out-of-range and malformed values.
		{[]string{e0 + "?phy=99"}, []string{`option phy="99"`, "0 to 31, or none"}},
		{[]string{e0 + "?vf=1&phy=1"}, []string{"option phy", "a VF has no MDIO bus", "give it to the PF"}},
		{[]string{e0 + "?mtu=20"}, []string{`option mtu="20"`, "[68, 65535]"}},
		{[]string{e0 + "?mtu=20000"}, []string{"MTU 20000", "[68, 9578]"}},
		{[]string{e0 + "?rx-ring=100"}, []string{"rx-ring size 100", "power of two in [64, 32768]"}},
		{[]string{e0 + "?queues=0"}, []string{`option queues="0"`, "[1, 64]"}},
		{[]string{e0 + "?promisc=maybe"}, []string{`option promisc="maybe"`, "1 or 0"}},
		{[]string{e0 + "?mac=01:00:5e:00:00:01"}, []string{`option mac="01:00:5e:00:00:01"`, "unicast address"}},
		{[]string{e0 + "?mac=zz"}, []string{`option mac="zz"`, "such as 02:00:00:00:00:01"}},
		{[]string{e0 + "?link-poll=soon"}, []string{`option link-poll="soon"`, "such as 100ms"}},
		{[]string{e0 + "?gen-rate=5G"}, []string{`option gen-rate="5G"`, "from 1 to 1G"}},
		{[]string{e0 + "?gen-rate=NaN"}, []string{`option gen-rate="NaN"`, "from 1 to 1G"}},
		{[]string{e0 + "?gen-size=10"}, []string{`option gen-size="10"`, "from 64 to 9600"}},
		{[]string{e0 + "?gen-flows=0"}, []string{`option gen-flows="0"`, "from 1 to 65535"}},
		{[]string{e0 + "?mode=turbo"}, []string{`option mode="turbo"`, "sync (", "or engine"}},
		{[]string{e0 + "?mmio-cost=1h"}, []string{`option mmio-cost="1h"`, "from 0 to 1ms"}},
		{[]string{e0 + "?link=sideways"}, []string{`option link="sideways"`, "up or down"}},
		{[]string{"sim:fec40?soc=imx99"}, []string{`option soc="imx99"`, "imx8mp"}},
		{[]string{"sim:fec40?phy=32"}, []string{`option phy="32"`, "0 to 31"}},
		{[]string{"sim:fec40?bd=fancy"}, []string{`option bd="fancy"`, "legacy or enhanced"}},
		{[]string{"sim:fec40?phy-mode=sgmii"}, []string{`option phy-mode="sgmii"`, "rgmii, rgmii-id, rgmii-rxid, rgmii-txid, rmii or mii"}},
		{[]string{"sim:fec40?speed=42"}, []string{`option speed="42"`, "10, 100 or 1000"}},
		{[]string{"sim:fec40?soc=imx6ul&queues=4"}, []string{"4 RX / 4 TX queues", "queues=1"}},
		// Misuse of wiring options.
		{[]string{e0 + "?peer=pci:0000:01:00.0"}, []string{"peer=", "another simulated port", "e.g. peer=sim:enetc1"}},
		{[]string{e0 + "?peer="}, []string{"option peer", "needs a value"}},
		{[]string{e0 + "?peer=sim:enetc41&sink=1"}, []string{"peer=", "cannot be combined"}},
		{[]string{e0 + "?pcap-speed=file"}, []string{"pcap-speed", "add pcap-in or drop pcap-speed"}},
		{[]string{e0 + "?gen=0&gen-size=128"}, []string{"gen-size", "the generator is off", "remove one of them"}},
		// Hostile paths and bad pcaps.
		{[]string{e0 + "?pcap-out=" + link}, []string{link, "symbolic link", "remove the link"}},
		{[]string{e0 + "?pcap-out=" + link + "&pcap-overwrite=1"}, []string{link, "symbolic link", "remove the link"}},
		{[]string{e0 + "?pcap-out=" + old}, []string{old, "already exists", "pcap-overwrite=1"}},
		{[]string{e0 + "?pcap-out=" + filepath.Join(dir, "no", "x.pcap")}, []string{"pcap-out", "create it or give another path"}},
		{[]string{e0 + "?pcap-in=" + missing}, []string{"pcap-in", missing}},
		{[]string{e0 + "?pcap-in=" + text}, []string{"pcap-in", text}},
		{[]string{e0 + "?pcap-in=" + empty}, []string{"pcap-in", empty}},
		{[]string{e0 + "?pcap-in=" + dir}, []string{"pcap-in", dir}},
		{[]string{"--capture", link, e0 + "?gen=1&sink=1"}, []string{"--capture", link, "remove the link"}},
		{[]string{"--capture", old, e0 + "?gen=1&sink=1"}, []string{"--capture", old, "--force"}},
		{[]string{"--capture", dir, "--force", e0 + "?gen=1&sink=1"}, []string{"--capture", dir, "regular file"}},
		{[]string{"--cpuprofile", link, e0 + "?gen=1&sink=1"}, []string{"--cpuprofile", link, "remove the link"}},
		{[]string{"--cpuprofile", old}, []string{"--cpuprofile", old, "--force"}},
	} {
		code, out, errOut := runUntil(t, append([]string{"--duration", "1ms"}, tc.args...), nil)
		lines := strings.Split(strings.TrimSpace(errOut), "\n")
		if code != 2 || len(lines) != 1 || out != "" {
			t.Errorf("%q: exit %d, stderr %q, stdout %q; want exit 2 and one line", tc.args, code, errOut, out)
			continue
		}
		for _, w := range tc.want {
			if !strings.Contains(errOut, w) {
				t.Errorf("%q: stderr %q does not say %q", tc.args, errOut, w)
			}
		}
	}
	if b, _ := os.ReadFile(victim); string(b) != "precious" {
		t.Fatalf("a planted link's target was written: %q", b)
	}
	if b, _ := os.ReadFile(old); string(b) != "old" {
		t.Fatalf("an existing file was written: %q", b)
	}
}
