# One line from ld65's map file of the software core (linker/softcore.cfg): its size in the window.
function hex(s,   i, v, c) {
    v = 0
    for (i = 1; i <= length(s); i++) { c = index("0123456789ABCDEF", toupper(substr(s, i, 1))) - 1; v = v * 16 + c }
    return v
}
/^Segment list/ { seg = 1 }
/^Exports list/ { seg = 0 }
seg && NF == 5 && $2 ~ /^[0-9A-F]+$/ { end[$1] = hex($3); size[$1] = hex($4) }
END {
    top = end["DATA"]
    printf "ssnail.core: %d bytes (code %d, rodata %d, data %d, bss %d); window $2000-$%04X used, %d bytes free below its C stack at $BC00; BSS $C000-$%04X, %d bytes free below $CE80\n", \
        file, size["CODE"], size["RODATA"], size["DATA"], size["BSS"], top, 48128 - top - 1, end["BSS"], 52864 - end["BSS"] - 1
}
