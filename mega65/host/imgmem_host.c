/* imgmem_host.c: the image's memory bounds (imgmem.h) for the PC build of the tokenizer; the
 * MEGA65 build has img_inside in ca65 (src/imgmem.s), same steps. */
#include "imgmem.h"
#include "ssnail_regs.h"

uint32_t img_top;

uint8_t img_inside(uint32_t addr, uint32_t count, uint8_t shift) {
    if (addr < IMG_BASE || addr > img_top) return 0;
    return count <= (img_top - addr) >> shift;
}
