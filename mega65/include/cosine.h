/* cosine.h: cosine similarity of sentence embeddings with integers only (no floats in cc65).
 * An embedding (IEEE float32 components, as SSNAIL writes them) becomes a unit vector of 16-bit
 * fixed-point components (emb_unit); the cosine of two such vectors is their dot product, which
 * fits 32 bits by Cauchy-Schwarz. Error against the exact cosine: at most about 0.0025 for any
 * input (see cosine.c), printed to three decimals. The same file is compiled for the PC test
 * (mega65/host/coshost.c). */
#ifndef COSINE_H
#define COSINE_H
#include <stdint.h>
#define EMB_ONE 32767   /* fixed-point 1.0 of a unit vector's components (Q15) */
/* the float32 bit patterns of component i come from word(i); out[0..dim) gets the unit vector
 * (all 0 for a zero vector, or one with NaN/infinity) */
void emb_unit(uint16_t dim, uint32_t (*word)(uint16_t i), int16_t *out);
/* round(1000 x cosine) of two unit vectors from emb_unit, -1000..1000 */
int16_t emb_cosine1000(const int16_t *a, const int16_t *b, uint16_t dim);
#endif
