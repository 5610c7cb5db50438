; Smallest program: prints "HI" to the serial monitor and exits with status 7.
.include "mega65.inc"
start:
        setup
        lda #'H'
        sta $D643
        clv
        lda #'I'
        sta $D643
        clv
        exit_with 7
