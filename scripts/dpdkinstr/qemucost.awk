# Own instructions per object and function of an arm64 run under
# qemu-aarch64 with the counting plugin (internal/benchinstr/tcgplugin),
# from three files, in this order:
#
#   the guest's mappings at exit (/proc/self/maps as qemu-user shows it
#   to the guest: guest addresses, the files' host paths; maps.c writes it)
#   the function symbols of every mapped object, one a line:
#       path<TAB>value (hex, as readelf prints it)<TAB>size<TAB>name
#   the plugin's counts: "start-address(hex) instructions times-entered"
#   lines and a closing "end"
#
# An object's load base is the start of its mapping at file offset 0, so
# a guest address less the base is the address its ELF symbols give. A
# block's instructions (4 bytes each, A64 has no other width) are charged
# to the function whose symbol covers them, split at function boundaries;
# code outside every symbol is "(unknown)" of its object, code in no file
# mapping is object "(none)". Prints "object<TAB>function<TAB>instructions"
# lines, as selfcost.awk does for callgrind.
function hex(s,   v, i, c) {
	sub(/^0[xX]/, "", s)
	v = 0
	for (i = 1; i <= length(s); i++) {
		c = index("0123456789abcdef", tolower(substr(s, i, 1)))
		if (c == 0) {
			printf "qemucost: %s is not a hex number\n", s > "/dev/stderr"
			bad = 1
			exit 1
		}
		v = v * 16 + c - 1
	}
	return v
}
BEGIN { FS = "[ \t]+"; nx = 0 }
FILENAME == ARGV[1] {
	split($1, r, "-")
	path = $6
	if (path == "") path = "(none)"
	if (path ~ /^\// && hex($3) == 0 && !(path in base)) base[path] = hex(r[1])
	if ($2 ~ /x/) { nx++; xs[nx] = hex(r[1]); xe[nx] = hex(r[2]); xp[nx] = path }
	next
}
FILENAME == ARGV[2] {
	split($0, f, "\t")
	lo = hex(f[2]); sz = f[3] + 0
	if (f[3] ~ /^0x/) sz = hex(f[3])
	p = f[1]
	k = ns[p]
	# The list is sorted by address; of two symbols that start at one
	# address the first keeps it, and one that starts inside the previous
	# takes the addresses after the previous one's end.
	if (k > 0 && lo < sh[p, k]) {
		if (lo + sz <= sh[p, k]) next
		sz -= sh[p, k] - lo; lo = sh[p, k]
	}
	k = ++ns[p]
	sl[p, k] = lo; sh[p, k] = lo + sz; sn[p, k] = f[4]
	next
}
$1 == "end" { ended = 1; next }
{
	if (NF != 3) { printf "qemucost: %s line %d: want \"address instructions count\", got %s\n", FILENAME, FNR, $0 > "/dev/stderr"; bad = 1; exit 1 }
	a = hex($1); left = $2 + 0; cnt = $3 + 0
	ob = "(none)"
	for (k = 1; k <= nx; k++) if (a >= xs[k] && a < xe[k]) { ob = xp[k]; break }
	if (ob == "(none)" || !(ob in base)) { cost[ob "\t(unknown)"] += left * cnt; next }
	rel = a - base[ob]
	while (left > 0) {
		# first symbol of ob whose end is above rel
		lo = 1; hi = ns[ob] + 1
		while (lo < hi) { mid = int((lo + hi) / 2); if (sh[ob, mid] > rel) hi = mid; else lo = mid + 1 }
		name = "(unknown)"
		if (lo <= ns[ob] && sl[ob, lo] <= rel) {
			name = sn[ob, lo]; n = int((sh[ob, lo] - rel + 3) / 4)
		} else if (lo <= ns[ob]) {
			n = int((sl[ob, lo] - rel + 3) / 4)
		} else {
			n = left
		}
		if (n > left) n = left
		if (n < 1) n = 1
		cost[ob "\t" name] += n * cnt
		rel += 4 * n; left -= n
	}
}
END {
	if (bad) exit 1
	if (!ended) { print "qemucost: the counts have no closing \"end\" line: the guest did not exit normally" > "/dev/stderr"; exit 1 }
	for (k in cost) if (cost[k]) printf "%s\t%.0f\n", k, cost[k]
}
