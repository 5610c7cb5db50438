/* ssnail_regs.h: SSNAIL register block, image header and runtime block addresses
 * (docs/spec/registers.md; spec §1.4, §1.5, §9.2). */
#ifndef SSNAIL_REGS_H
#define SSNAIL_REGS_H
#define SS_REG(off)       (0x0FFD7500UL + (off))
#define SS_ID             SS_REG(0x00)   /* reads $53 when the core is present */
#define SS_ID_VALUE       0x53
#define SS_VERSION        SS_REG(0x01)
#define SS_CAPS           SS_REG(0x02)   /* bit 0 SDRAM at $8000000, bit 1 HyperRAM, bit 7 emulator */
#define SS_CAP_SDRAM      0x01
#define SS_CAP_HYPERRAM   0x02
#define SS_CAP_EMULATOR   0x80
#define SS_GO             SS_REG(0x03)   /* write 1 */
#define SS_STATUS         SS_REG(0x04)   /* bit 0 busy, bit 1 fault */
#define SS_ERROR          SS_REG(0x05)
#define SS_MEM_MB         SS_REG(0x06)
#define SS_JOB0           SS_REG(0x08)   /* job pointer, 4 bytes LE */
#define SS_LP_PTR0        SS_REG(0x14)   /* load pointer bits 0-23 ($14-$16) */
#define SS_LP_COMMIT      SS_REG(0x17)   /* write: bits 24-27 + commit, bit 6 clears ERROR; read: bit 7 READY, bit 6 ERROR */
#define SS_LP_DATA        SS_REG(0x18)
#define SS_LP_READY       0x80
#define SS_LP_ERROR       0x40

/* image */
#define IMG_BASE          0x08000000UL
#define IMG_HEADER_LEN    0x100
#define IMG_MAGIC         "SSNL"         /* 4 bytes at H_MAGIC */
#define H_MAGIC           0x00
#define H_VERSION         0x04
#define H_FLAGS           0x06
#define H_CODE            0x08
#define H_SCRATCH         0x10
#define H_TOKENS          0x14
#define H_VOCAB           0x18
#define H_NVOCAB          0x1C
#define H_MAXCTX          0x20
#define H_BOS             0x24
#define H_EOS             0x28
#define H_PAYLOAD_LEN     0x2C
#define H_OUTPUT          0x30
#define H_OUTDIM          0x34
#define H_MEM_NEEDED      0x38
#define H_ARCH            0x3C
#define H_LOAD_BASE       0x64
#define H_HOST_SEG_LEN    0x74
#define H_TOKENIZER       0x78
#define H_DESC            0x80
/* runtime block */
#define RB_POS            0x40
#define RB_PROMPT_LEN     0x44
#define RB_N_GENERATE     0x48
#define RB_GENERATED      0x4C
#define RB_STOP_REQUEST   0x50
#define RB_STOP_REASON    0x54
#define HDR(off)          (IMG_BASE + (off))
#endif
