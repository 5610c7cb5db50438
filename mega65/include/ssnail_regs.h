/* ssnail_regs.h: the SSNAIL contract for C — register block, image header, runtime block,
 * stop reasons, tokenizer block (docs/spec/registers.md, docs/spec/image.md).
 * GENERATED from the ssnail-format crate (format/src/c_header.rs); do not edit. Regenerate:
 *   cargo run -q -p ssnail-format --example c_header > mega65/include/ssnail_regs.h */
#ifndef SSNAIL_REGS_H
#define SSNAIL_REGS_H
#define SS_BLOCK             0x0FFD7500UL   /* register 0 */
#define SS_ID                (SS_BLOCK + 0x00) /* reads SS_ID_VALUE when the core is present */
#define SS_VERSION           (SS_BLOCK + 0x01)
#define SS_CAPS              (SS_BLOCK + 0x02) /* SS_CAP_* bits */
#define SS_GO                (SS_BLOCK + 0x03) /* write SS_GO_START */
#define SS_STATUS            (SS_BLOCK + 0x04) /* SS_STATUS_* bits */
#define SS_ERROR             (SS_BLOCK + 0x05) /* SS_ERR_* after a faulted job */
#define SS_MEM_MB            (SS_BLOCK + 0x06)
#define SS_JOB0              (SS_BLOCK + 0x08) /* job pointer, 4 bytes LE */
#define SS_FAULT_PC0         (SS_BLOCK + 0x0C) /* PC of the last fault, 4 bytes LE */
#define SS_HYPERRAM_MB       (SS_BLOCK + 0x10)
#define SS_SDRAM_BASE        (SS_BLOCK + 0x11) /* in MB units */
#define SS_SDRAM_MB          (SS_BLOCK + 0x12)
#define SS_HYPERRAM_BASE     (SS_BLOCK + 0x13) /* in MB units */
#define SS_LP_PTR0           (SS_BLOCK + 0x14) /* load pointer bits 0-23 (3 bytes) */
#define SS_LP_COMMIT         (SS_BLOCK + 0x17) /* write: bits 24-27 + commit */
#define SS_LP_DATA           (SS_BLOCK + 0x18)
#define SS_ID_VALUE          0x53
#define SS_CAP_SDRAM         0x01           /* the RAM at $8000000 is SDRAM */
#define SS_CAP_HYPERRAM      0x02
#define SS_CAP_EMULATOR      0x80
#define SS_GO_START          0x01
#define SS_STATUS_BUSY       0x01
#define SS_STATUS_FAULT      0x02
#define SS_LP_READY          0x80           /* read */
#define SS_LP_ERROR          0x40           /* read */
#define SS_LP_CLEAR_ERROR    0x40           /* write */
#define SS_LP_PTR_HIGH       0x0F           /* bits 24-27 */
#define SS_ERR_NONE          0
#define SS_ERR_ILLEGAL_OPCODE 1
#define SS_ERR_MISALIGNED_PC 2
#define SS_ERR_ADDRESS       3
#define SS_ERR_INSTR_LIMIT   4
#define SS_ERR_BAD_OPERAND   5
#define SS_INSTR_LIMIT       50000000UL     /* instructions per job on the software core (code 4 after) */
#define IMG_BASE             0x08000000UL   /* header; SSNAIL memory starts here */
#define IMG_HEADER_LEN       0x100
#define IMG_MAGIC            "SSNL"         /* 4 bytes at H_MAGIC */
#define IMG_VERSION          1
#define IMG_FLAG_ENCODER     1              /* H_FLAGS bit */
#define IMG_ANSWER_TOKENS    0x0000FFFFUL   /* H_ANSWER bits: tokens per answer */
#define IMG_ANSWER_GREEDY    0x00010000UL   /* H_ANSWER bit: greedy */
#define IMG_OUTPUT_AREA      0x08000100UL
#define IMG_TOKENS           0x08001000UL   /* token buffer, u32 each */
#define IMG_TOKEN_SLOTS      4096
#define IMG_MAX_CTX          4095           /* largest context (H_MAXCTX) */
#define IMG_PAYLOAD_BASE     0x08005000UL
#define IMG_HYPERRAM_BOUNDARY 0x0C000000UL
#define H_MAGIC              0x00
#define H_VERSION            0x04
#define H_FLAGS              0x06
#define H_CODE               0x08
#define H_DATA               0x0C
#define H_SCRATCH            0x10
#define H_TOKENS             0x14
#define H_VOCAB              0x18
#define H_NVOCAB             0x1C
#define H_MAXCTX             0x20
#define H_BOS                0x24
#define H_EOS                0x28
#define H_PAYLOAD_LEN        0x2C
#define H_OUTPUT             0x30
#define H_OUTDIM             0x34
#define H_MEM_NEEDED         0x38
#define H_ARCH               0x3C
#define H_REGIONS            0x60
#define H_LOAD_BASE          0x64
#define H_HOST_BASE          0x70
#define H_HOST_SEG_LEN       0x74
#define H_TOKENIZER          0x78
#define H_CHAT               0x7C
#define H_ANSWER             0x58
#define H_DESC               0x80
#define H_DESC_LEN           0x80
#define ARCH_LLAMA           0              /* H_ARCH */
#define ARCH_GPT2            1              /* H_ARCH */
#define ARCH_BERT            2              /* H_ARCH */
#define RB_POS               0x40           /* runtime block, from IMG_BASE */
#define RB_PROMPT_LEN        0x44           /* runtime block, from IMG_BASE */
#define RB_N_GENERATE        0x48           /* runtime block, from IMG_BASE */
#define RB_GENERATED         0x4C           /* runtime block, from IMG_BASE */
#define RB_STOP_REQUEST      0x50           /* runtime block, from IMG_BASE */
#define RB_STOP_REASON       0x54           /* runtime block, from IMG_BASE */
#define STOP_COUNT           1              /* RB_STOP_REASON */
#define STOP_EOS             2              /* RB_STOP_REASON */
#define STOP_CONTEXT_FULL    3              /* RB_STOP_REASON */
#define STOP_REQUESTED       4              /* RB_STOP_REASON */
#define TB_LEN               36             /* tokenizer block at H_TOKENIZER */
#define TB_KIND              0
#define TB_FLAGS             1
#define TB_N_VOCAB           4
#define TB_INDEX             8
#define TB_INDEX_LEN         12
#define TB_PRIORITY          16
#define TB_BYTE_TABLE        20
#define TB_BEGIN             24
#define TB_END               28
#define TB_UNK               32
#define TF_LOWERCASE         0x02           /* TB_FLAGS */
#define TF_PRIO32            0x08           /* TB_FLAGS */
#define TOK_SPM              0              /* TB_KIND */
#define TOK_BPE              1              /* TB_KIND */
#define TOK_WORDPIECE        2              /* TB_KIND */
#define CB_MAX_SEQ           32             /* chat block at H_CHAT: most tokens per sequence */
#define CB_MAGIC_WORD        0x54414843UL   /* chat block's first 4 bytes ("CHAT") as a little-endian word */
#define CB_NAME_LEN          16             /* bytes of the template family's name at CB_NAME */
#define CB_N_FIRST           4
#define CB_N_PREFIX          5
#define CB_N_SUFFIX          6
#define CB_N_END             7
#define CB_NAME              8
#define CB_IDS               24
#define TOK_NONE             0xFFFFFFFFUL   /* no token (u32 tables) */
#define TOK_NONE16           0xFFFF         /* no priority (u16 table) */
#define HDR(off)             (IMG_BASE + (off))
#endif
