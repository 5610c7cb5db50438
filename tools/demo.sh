#!/usr/bin/env bash
# The two halves of `make demo` (the Makefile has built and cached everything):
#   1. the MEGA65 program in the headless MEGA65 embeds four typed sentences
#      with all-MiniLM-L6-v2 and ranks them on its 80-column screen;
#   2. SmolLM2-135M continues a prompt on the PC emulator of the SSNAIL core.
set -euo pipefail
demo=$1 build=$2
ssnail=${SSNAIL:?}

echo
echo "== 1. MEGA65 program, headless MEGA65 (R4-R6 board, 72 MB SSNAIL), all-MiniLM-L6-v2 from the SD card"
echo "   ssnail mega65 --d81 $build/ssnail.d81 --sd $build/sdcard --keys …"
echo
"$ssnail" mega65 --d81 "$build/ssnail.d81" --sd "$build/sdcard" --seconds 120 \
  --screen "$build/demo-minilm.png" \
  --keys '{RETURN}The cat sat on the mat.{RETURN}A kitten is resting on a rug.{RETURN}Stock markets fell sharply today.{RETURN}Shares dropped as investors worried.{RETURN}'
echo "   (screen saved as $build/demo-minilm.png)"

echo
echo "== 2. SmolLM2-135M (Q4_0) on the PC emulator of the SSNAIL core, greedy as the v1 hardware"
echo "   ssnail chat $demo/smollm2.ssnail --greedy -n 48 --prompt 'Once upon a time, in a small village,'"
echo
"$ssnail" chat "$demo/smollm2.ssnail" --greedy -n 48 --prompt 'Once upon a time, in a small village,'
