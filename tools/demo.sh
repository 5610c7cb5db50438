#!/usr/bin/env bash
# The parts of `make demo` (the Makefile has built and cached everything):
#   0. the model trained here (model/ssnail-qa.gguf) answers questions on a stock MEGA65 R3:
#      no SSNAIL core, the program's software core from the D81, with the speed it prints;
#   1. the MEGA65 program in the headless MEGA65 embeds four typed sentences
#      with all-MiniLM-L6-v2 and ranks them on its 80-column screen;
#   2. SmolLM2-135M continues a prompt on the PC emulator of the SSNAIL core.
set -euo pipefail
decoder=$1 build=$2 qa=${3:-}
ssnail=${SSNAIL:?}

if [ -n "$qa" ]; then
  # greedy (/temp 0) with /reset before each question: one question, one answer, as the model
  # was trained and measured
  keys='{RETURN}{WAIT 2}/temp 0{RETURN}what is the mega65?{RETURN}/reset{RETURN}Which CPU does the MEGA65 have?{RETURN}/reset{RETURN}what is ssnail?{RETURN}/reset{RETURN}who trained you?{RETURN}'
  echo
  echo "== 0. A model made for the MEGA65 ($qa, trained here) on a stock R3: no SSNAIL core, the software core from the disk"
  echo "   ssnail mega65 --d81 $build/ssnail.d81 --ssnail-mib 0 --board r3 --keys '$keys'"
  echo
  "$ssnail" mega65 --d81 "$build/ssnail.d81" --ssnail-mib 0 --board r3 --seconds 90 --no-screen \
    --keys "$keys" | sed -n '/^Loaded /,$p' | grep -v '^\[budget used up'
fi

echo
echo "== 1. MEGA65 program in the headless MEGA65 (an R4-R6 board with the SSNAIL FPGA core, 72 MB): a sentence encoder"
echo "   ssnail mega65 --fpga --d81 $build/ssnail.d81 --sd $build/sdcard --keys '{RETURN}The cat sat on the mat.{RETURN}…'"
echo
# Images too big for the disk are in the SD-card folder (make disk says which).
sd=()
[ -d "$build/sdcard" ] && sd=(--sd "$build/sdcard")
"$ssnail" mega65 --fpga --d81 "$build/ssnail.d81" "${sd[@]}" --seconds 120 \
  --screen "$build/demo-screen.png" \
  --keys '{RETURN}The cat sat on the mat.{RETURN}A kitten is resting on a rug.{RETURN}Stock markets fell sharply today.{RETURN}Shares dropped as investors worried.{RETURN}'
echo "   (screen saved as $build/demo-screen.png)"

echo
echo "== 2. A decoder on the PC emulator of the SSNAIL core, greedy as the v1 hardware"
echo "   ssnail chat $decoder --raw --greedy -n 48 --prompt 'Once upon a time, in a small village,'"
echo
"$ssnail" chat "$decoder" --raw --greedy -n 48 --prompt 'Once upon a time, in a small village,'
