# One line of output from ld65's map file: program size and the memory left (see linker/mega65.cfg).
function hex(s,   i, v, c) {
    v = 0
    for (i = 1; i <= length(s); i++) { c = index("0123456789ABCDEF", toupper(substr(s, i, 1))) - 1; v = v * 16 + c }
    return v
}
/^Segment list/ { seg = 1 }
/^Exports list/ { seg = 0 }
seg && NF == 5 && $2 ~ /^[0-9A-F]+$/ { start[$1] = hex($2); end[$1] = hex($3); size[$1] = hex($4) }
END {
    top = end["BSS"]
    printf "ssnail.prg: %d bytes (code %d, rodata %d, data %d); BSS to $%04X; %d bytes free below the C stack at $CE80; HIBSS %d of 8176 bytes at $E000; LOWRAM %d of 3840 at $1000\n", \
        prg, size["CODE"], size["RODATA"], size["DATA"], top, 52864 - top - 1, size["HIBSS"], size["RESIDENT"] + size["LOWBSS"]
}
