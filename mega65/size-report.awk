# One line of output from ld65's map file: program size and the memory left (see linker/mega65.cfg).
# ($5B800: __OVL_CHIP_END__ there, the end of the overlays' chip RAM copies)
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
    region = 49152 - start["OVCHAT"]
    size["OVBROWSE"] += size["OVBRO"]
    size["OVCHAT"] += size["OVCHATRO"]
    big = size["OVCHAT"] > size["OVBROWSE"] ? size["OVCHAT"] : size["OVBROWSE"]
    printf "ssnail.prg: %d bytes (resident code %d, rodata %d, data %d; browser overlay %d), ssnail.ovl: %d bytes (chat overlay %d); BSS to $%04X; overlay region $%04X-$BFFF, %d bytes: %d free for the chat overlay, %d for the browser's; chip RAM copies to $%05X, %d bytes free below $5B800; HIBSS %d of 8176 bytes at $E000; LOWRAM %d of 3840 at $1000\n", \
        prg, size["CODE"], size["RODATA"], size["DATA"], size["OVBROWSE"], ovl, size["OVCHAT"], top, start["OVCHAT"], region, \
        region - size["OVCHAT"], region - size["OVBROWSE"], 342016 + size["OVBROWSE"] + size["OVCHAT"], \
        374784 - 342016 - size["OVBROWSE"] - size["OVCHAT"], size["HIBSS"], size["RESIDENT"] + size["LOWBSS"]
}
