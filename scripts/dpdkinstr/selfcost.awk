# Own (exclusive) instructions per object and function of a callgrind
# output file (format: valgrind's callgrind manual, "Callgrind Format
# Specification"): ob= and fn= name the current object and function
# (with name compression, "(id) name" the first time, "(id)" after); a
# cost line after calls= is the callee's inclusive cost and is skipped;
# every other cost line is the current function's own. Prints
# "object<TAB>function<TAB>Ir" lines.
function name(s, m,   id) {
	if (match(s, /^\([0-9]+\)/)) {
		id = substr(s, 2, RLENGTH - 2)
		s = substr(s, RLENGTH + 1)
		sub(/^ /, "", s)
		if (s != "") m[id] = s
		return m[id]
	}
	return s
}
/^ob=/ { ob = name(substr($0, 4), obs); next }
/^fn=/ { fn = name(substr($0, 4), fns); next }
/^cob=/ { name(substr($0, 5), obs); next }
/^cfn=/ { name(substr($0, 5), fns); next }
/^calls=/ { skip = 1; next }
/^[0-9+*-]/ {
	if (skip) { skip = 0; next }
	cost[ob "\t" fn] += $2
	next
}
END { for (k in cost) if (cost[k]) print k "\t" cost[k] }
