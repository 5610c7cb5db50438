//! 45GS02 instruction tests written from the spec's facts (§M1): one table row per case
//! with code bytes, initial state, expected state and cycles; every base opcode appears at least
//! once (checked), then decimal mode, quad and flat forms, MAP, 16-bit branches, BSR/RTS, the
//! 16-bit stack and interrupts.
//!
//! Row syntax: `code bytes | setup | expect [| +extra cycles]`. State tokens: `A= X= Y= Z= B= P=`
//! (hex bytes), `SP=` and `PC=` (hex words), `mADDR=b0,b1,..` (bytes at a CPU address). Code runs
//! at $2000; registers start at 0, P = $20 (E set), SP = $01FF. Unmentioned state is not checked,
//! except PC, which defaults to the instruction's end.

use ssnail_mega65::{Machine, StopReason};

/// Cycles at 40.5 MHz per base opcode: the "xemu 40MHz" column of the spec's opcode table (§M1.4).
const CYCLES_40MHZ: [u64; 256] = [
    9, 7, 3, 1, 6, 4, 6, 6, 3, 2, 1, 1, 7, 5, 7, 5, // $0x
    2, 7, 7, 4, 6, 4, 6, 6, 1, 5, 1, 1, 7, 5, 7, 5, // $1x
    5, 7, 8, 8, 4, 4, 6, 6, 4, 2, 1, 1, 5, 5, 7, 5, // $2x
    2, 7, 7, 4, 4, 4, 6, 6, 1, 5, 1, 1, 5, 5, 7, 5, // $3x
    6, 7, 1, 1, 6, 4, 6, 6, 3, 2, 1, 1, 5, 5, 7, 5, // $4x
    2, 7, 7, 4, 6, 4, 6, 6, 3, 5, 3, 1, 3, 5, 7, 5, // $5x
    5, 7, 5, 5, 3, 4, 6, 6, 4, 2, 1, 1, 7, 5, 7, 5, // $6x
    2, 7, 7, 4, 3, 4, 6, 6, 1, 5, 4, 1, 7, 5, 7, 5, // $7x
    4, 6, 7, 5, 3, 3, 3, 6, 1, 2, 1, 4, 4, 4, 4, 5, // $8x
    2, 6, 6, 4, 3, 3, 3, 6, 1, 4, 1, 4, 4, 4, 4, 5, // $9x
    2, 7, 2, 2, 4, 4, 4, 6, 1, 2, 1, 5, 5, 5, 5, 5, // $Ax
    2, 7, 7, 4, 4, 4, 4, 6, 1, 5, 1, 5, 5, 5, 5, 5, // $Bx
    2, 7, 2, 8, 4, 4, 6, 6, 1, 2, 1, 9, 5, 5, 7, 5, // $Cx
    2, 7, 7, 4, 4, 4, 6, 6, 1, 5, 3, 3, 5, 5, 7, 5, // $Dx
    2, 7, 8, 8, 4, 4, 6, 6, 1, 2, 1, 9, 5, 5, 7, 5, // $Ex
    2, 7, 7, 4, 6, 4, 6, 6, 1, 5, 4, 4, 9, 5, 7, 5, // $Fx
];

/// One row per case; the first byte is the opcode under test.
const BASE_CASES: &str = "
00       | mFFFE=00,30 P=20            | PC=3000 SP=01FC m01FF=20 m01FE=02 m01FD=30 P=24
01 10    | X=04 A=01 m0014=00,40 m4000=80 | A=81 P=A0
02       | P=20                        | P=00
03       | P=00                        | P=20
04 10    | A=0F m0010=F0               | m0010=FF P=22
05 10    | A=01 m0010=02               | A=03 P=20
06 10    | m0010=81                    | m0010=02 P=21
07 10    | m0010=FF                    | m0010=FE
08       | P=21                        | m01FF=31 SP=01FE
09 80    | A=01                        | A=81 P=A0
0A       | A=40                        | A=80 P=A0
0B       | SP=0180                     | Y=01 P=20
0C 00 40 | A=01 m4000=02               | m4000=03 P=22
0D 00 40 | m4000=00                    | A=00 P=22
0E 00 40 | m4000=01                    | m4000=02 P=20
0F 10 05 | m0010=FE                    | PC=2008
10 10    | P=20                        | PC=2012 | +2
10 10    | P=A0                        | PC=2002
11 10    | Y=02 m0010=00,40 m4002=0F A=F0 | A=FF P=A0
12 10    | Z=03 m0010=00,40 m4003=01   | A=01 P=20
13 FD 0F | P=20                        | PC=2FFF
14 10    | A=0F m0010=FF               | m0010=F0 P=20
15 10    | X=01 m0011=08               | A=08 P=20
16 10    | X=01 m0011=80               | m0011=00 P=23
17 10    | m0010=FF                    | m0010=FD
18       | P=21                        | P=20
19 00 40 | Y=05 m4005=10               | A=10 P=20
1A       | A=FF                        | A=00 P=22
1B       | Z=7F                        | Z=80 P=A0
1C 00 40 | A=01 m4000=03               | m4000=02 P=20
1D 00 40 | X=01 m4001=01               | A=01
1E 00 40 | X=02 m4002=C0               | m4002=80 P=A1
1F 10 05 | m0010=02                    | PC=2003
20 00 30 |                             | PC=3000 SP=01FD m01FF=20 m01FE=02
21 10    | X=02 A=0F m0012=00,40 m4000=3C | A=0C P=20
22 00 40 | m4000=34,12                 | PC=1234 m01FF=20 m01FE=02 SP=01FD
23 00 40 | X=02 m4002=78,56            | PC=5678 SP=01FD
24 10    | A=01 m0010=C0               | P=E2
25 10    | A=F0 m0010=3C               | A=30 P=20
26 10    | P=21 m0010=80               | m0010=01 P=21
27 10    | m0010=FF                    | m0010=FB
28       | SP=01FE m01FF=C3 P=20       | P=E3 SP=01FF
29 0F    | A=F1                        | A=01 P=20
2A       | A=80 P=20                   | A=00 P=23
2B       | Y=12 SP=01FF                | SP=12FF
2C 00 40 | A=00 m4000=40               | P=62
2D 00 40 | A=FF m4000=80               | A=80 P=A0
2E 00 40 | m4000=40                    | m4000=80 P=A0
2F 10 FB | m0010=00                    | PC=1FFE
30 04    | P=A0                        | PC=2006 | +2
30 04    | P=20                        | PC=2002
31 10    | A=FF Y=01 m0010=FF,3F m4000=55 | A=55
32 10    | A=0F Z=01 m0010=00,40 m4001=F3 | A=03
33 00 10 | P=80                        | PC=3002
34 10    | X=01 A=FF m0011=00          | P=22
35 10    | X=01 A=FF m0011=7F          | A=7F P=20
36 10    | X=01 m0011=01               | m0011=02
37 10    | m0010=FF                    | m0010=F7
38       | P=20                        | P=21
39 00 40 | Y=01 A=0F m4001=0A          | A=0A
3A       | A=00                        | A=FF P=A0
3B       | Z=01                        | Z=00 P=22
3C 00 40 | X=01 A=80 m4001=80          | P=A0
3D 00 40 | X=01 A=F0 m4001=0F          | A=00 P=22
3E 00 40 | X=01 P=21 m4001=00          | m4001=01 P=20
3F 10 05 | m0010=F7                    | PC=2008
40       | SP=01FC m01FD=81 m01FE=34 m01FF=12 P=20 | P=A1 PC=1234 SP=01FF
41 10    | X=00 A=FF m0010=00,40 m4000=0F | A=F0 P=A0
42       | A=01                        | A=FF P=A0
43       | A=81                        | A=C0 P=A1
44 10    | m0010=02                    | m0010=01 P=20
45 10    | A=FF m0010=FF               | A=00 P=22
46 10    | m0010=01                    | m0010=00 P=23
47 10    | m0010=FF                    | m0010=EF
48       | A=5A                        | m01FF=5A SP=01FE
49 0F    | A=F0                        | A=FF P=A0
4A       | A=80                        | A=40 P=20
4B       | A=80                        | Z=80 P=A0
4C 34 12 |                             | PC=1234
4D 00 40 | A=01 m4000=03               | A=02
4E 00 40 | m4000=03                    | m4000=01 P=21
4F 10 05 | m0010=EF                    | PC=2008
50 02    | P=20                        | PC=2004 | +2
51 10    | Y=01 A=00 m0010=00,40 m4001=80 | A=80 P=A0
52 10    | Z=01 A=01 m0010=00,40 m4001=01 | A=00 P=22
53 00 01 | P=60                        | PC=2003
54 10    | X=01 m0011=80               | m0011=C0 P=A0
55 10    | X=01 A=0F m0011=01          | A=0E
56 10    | X=01 m0011=02               | m0011=01 P=20
57 10    | m0010=FF                    | m0010=DF
58       | P=24                        | P=20
59 00 40 | Y=01 A=01 m4001=01          | A=00 P=22
5A       | Y=77                        | m01FF=77 SP=01FE
5B       | A=12                        | B=12 P=20
5C       | A=00 X=00 Y=00 Z=00         |
5D 00 40 | X=01 A=FF m4001=FF          | A=00 P=22
5E 00 40 | X=01 m4001=FF               | m4001=7F P=21
5F 10 05 | m0010=20                    | PC=2003
60       | SP=01FD m01FE=33 m01FF=12   | PC=1234 SP=01FF
61 10    | X=00 A=01 m0010=00,40 m4000=01 P=21 | A=03 P=20
62 02    | SP=01FB m01FC=33 m01FD=12   | PC=1234 SP=01FF
63 FD 0F |                             | PC=2FFF m01FF=20 m01FE=02 SP=01FD
64 10    | Z=5A m0010=00               | m0010=5A
65 10    | A=7F m0010=01               | A=80 P=E0
66 10    | P=21 m0010=02               | m0010=81 P=A0
67 10    | m0010=FF                    | m0010=BF
68       | SP=01FE m01FF=00 A=55       | A=00 P=22 SP=01FF
69 01    | A=FF                        | A=00 P=23
6A       | A=01 P=20                   | A=00 P=23
6B       | Z=80                        | A=80 P=A0
6C 00 40 | m4000=34,12                 | PC=1234
6D 00 40 | A=10 m4000=20               | A=30 P=20
6E 00 40 | m4000=01                    | m4000=00 P=23
6F 10 05 | m0010=BF                    | PC=2008
70 10    | P=60                        | PC=2012 | +2
71 10    | Y=01 A=01 m0010=00,40 m4001=01 | A=02
72 10    | Z=01 A=80 m0010=00,40 m4001=80 | A=00 P=63
73 00 01 | P=60                        | PC=2102
74 10    | X=01 Z=33                   | m0011=33
75 10    | X=01 A=01 m0011=02          | A=03
76 10    | X=01 m0011=03               | m0011=01 P=21
77 10    | m0010=FF                    | m0010=7F
78       | P=20                        | P=24
79 00 40 | Y=01 A=01 m4001=01 P=21     | A=03 P=20
7A       | SP=01FE m01FF=80            | Y=80 P=A0 SP=01FF
7B       | B=45                        | A=45 P=20
7C 00 40 | X=02 m4002=34,12            | PC=1234
7D 00 40 | X=01 A=50 m4001=50          | A=A0 P=E0
7E 00 40 | X=01 m4001=80               | m4001=40 P=20
7F 10 05 | m0010=7F                    | PC=2008
80 FE    |                             | PC=2000 | +2
81 10    | X=02 A=99 m0012=00,40       | m4000=99
82 02    | SP=01F0 Y=01 A=77 m01F2=00,40 | m4001=77
83 00 F0 |                             | PC=1002
84 10    | Y=12                        | m0010=12
85 10    | A=12 B=40                   | m4010=12
86 10    | X=12                        | m0010=12
87 10    | m0010=00                    | m0010=01
88       | Y=00                        | Y=FF P=A0
89 C0    | A=00                        | P=E2
8A       | X=00 A=05                   | A=00 P=22
8B 00 40 | X=01 Y=66                   | m4001=66
8C 00 40 | Y=66                        | m4000=66
8D 00 40 | A=66                        | m4000=66
8E 00 40 | X=66                        | m4000=66
8F 10 05 | m0010=01                    | PC=2008
90 05    | P=20                        | PC=2007 | +2
91 10    | Y=05 A=42 m0010=00,40       | m4005=42
92 10    | Z=05 A=42 m0010=00,40       | m4005=42
93 00 00 | P=20                        | PC=2002
94 10    | X=01 Y=01                   | m0011=01
95 FF    | X=12 A=07                   | m0011=07
96 10    | Y=01 X=09                   | m0011=09
97 10    | m0010=00                    | m0010=02
98       | Y=80                        | A=80 P=A0
99 00 40 | Y=01 A=01                   | m4001=01
9A       | X=80                        | SP=0180
9B 00 40 | Y=02 X=03                   | m4002=03
9C 00 40 | Z=AA m4000=00               | m4000=AA
9D FF 40 | X=01 A=01                   | m4100=01
9E 00 40 | X=01 Z=00 m4001=55          | m4001=00
9F 10 05 | m0010=00                    | PC=2003
A0 80    |                             | Y=80 P=A0
A1 10    | X=01 m0011=00,40 m4000=00 A=01 | A=00 P=22
A2 00    | X=01                        | X=00 P=22
A3 7F    |                             | Z=7F P=20
A4 10    | m0010=05                    | Y=05
A5 10    | m0010=05                    | A=05
A6 10    | m0010=05                    | X=05
A7 10    | m0010=00                    | m0010=04
A8       | A=00 Y=01                   | Y=00 P=22
A9 00    | A=01                        | A=00 P=22
AA       | A=81                        | X=81 P=A0
AB 00 40 | m4000=81                    | Z=81 P=A0
AC 00 40 | m4000=01                    | Y=01
AD 00 40 | m4000=01                    | A=01
AE 00 40 | m4000=01                    | X=01
AF 10 05 | m0010=04                    | PC=2008
B0 05    | P=21                        | PC=2007 | +2
B1 10    | Y=01 m0010=FF,40 m4100=66   | A=66
B2 10    | Z=01 m0010=FF,40 m4100=66   | A=66
B3 FF FF | P=21                        | PC=2001
B4 10    | X=01 m0011=01               | Y=01
B5 10    | X=01 m0011=01               | A=01
B6 10    | Y=01 m0011=01               | X=01
B7 10    | m0010=00                    | m0010=08
B8       | P=60                        | P=20
B9 00 40 | Y=01 m4001=01               | A=01
BA       | SP=01F0                     | X=F0 P=A0
BB 00 40 | X=01 m4001=01               | Z=01
BC 00 40 | X=01 m4001=01               | Y=01
BD 00 40 | X=01 m4001=01               | A=01
BE 00 40 | Y=01 m4001=01               | X=01
BF 10 05 | m0010=08                    | PC=2008
C0 10    | Y=10                        | P=23
C1 10    | X=00 A=10 m0010=00,40 m4000=20 | P=A0
C2 05    | Z=10                        | P=21
C3 10    | m0010=00,01                 | m0010=FF,00 P=20
C4 10    | Y=01 m0010=01               | P=23
C5 10    | A=02 m0010=01               | P=21
C6 10    | m0010=01                    | m0010=00 P=22
C7 10    | m0010=00                    | m0010=10
C8       | Y=FF                        | Y=00 P=22
C9 01    | A=01                        | P=23
CA       | X=01                        | X=00 P=22
CB 00 40 | m4000=00,80                 | m4000=00,00 P=23
CC 00 40 | Y=00 m4000=01               | P=A0
CD 00 40 | A=FF m4000=00               | P=A1
CE 00 40 | m4000=00                    | m4000=FF P=A0
CF 10 05 | m0010=10                    | PC=2008
D0 05    | P=20                        | PC=2007 | +2
D1 10    | Y=01 A=05 m0010=00,40 m4001=05 | P=23
D2 10    | Z=01 A=05 m0010=00,40 m4001=06 | P=A0
D3 FC 0F | P=20                        | PC=2FFE
D4 10    | Z=05 m0010=05               | P=23
D5 10    | X=01 A=05 m0011=04          | P=21
D6 10    | X=01 m0011=80               | m0011=7F P=20
D7 10    | m0010=00                    | m0010=20
D8       | P=28                        | P=20
D9 00 40 | Y=01 A=05 m4001=05          | P=23
DA       | X=11                        | m01FF=11 SP=01FE
DB       | Z=22                        | m01FF=22 SP=01FE
DC 00 40 | Z=01 m4000=02               | P=A0
DD 00 40 | X=01 A=05 m4001=05          | P=23
DE 00 40 | X=01 m4001=02               | m4001=01 P=20
DF 10 05 | m0010=00                    | PC=2003
E0 05    | X=05                        | P=23
E1 10    | X=00 A=05 P=21 m0010=00,40 m4000=03 | A=02 P=21
E2 02    | SP=01F0 Y=01 m01F2=00,40 m4001=99 | A=99 P=A0
E3 10    | m0010=FF,FF                 | m0010=00,00 P=22
E4 10    | X=05 m0010=06               | P=A0
E5 10    | A=00 P=21 m0010=01          | A=FF P=A0
E6 10    | m0010=7F                    | m0010=80 P=A0
E7 10    | m0010=00                    | m0010=40
E8       | X=7F                        | X=80 P=A0
E9 01    | A=80 P=21                   | A=7F P=61
EA       |                             | PC=2001
EB 00 40 | P=21 m4000=00,40            | m4000=01,80 P=A0
EC 00 40 | X=05 m4000=05               | P=23
ED 00 40 | A=05 P=20 m4000=01          | A=03 P=21
EE 00 40 | m4000=FF                    | m4000=00 P=22
EF 10 05 | m0010=40                    | PC=2008
F0 05    | P=22                        | PC=2007 | +2
F1 10    | Y=01 A=10 P=21 m0010=00,40 m4001=10 | A=00 P=23
F2 10    | Z=01 A=10 P=21 m0010=00,40 m4001=11 | A=FF P=A0
F3 00 10 | P=22                        | PC=3002
F4 34 12 |                             | m01FF=34 m01FE=12 SP=01FD
F5 10    | X=01 A=10 P=21 m0011=01     | A=0F P=21
F6 10    | X=01 m0011=01               | m0011=02 P=20
F7 10    | m0010=00                    | m0010=80
F8       | P=20                        | P=28
F9 00 40 | Y=01 A=10 P=21 m4001=01     | A=0F
FA       | SP=01FE m01FF=00 X=01       | X=00 P=22 SP=01FF
FB       | SP=01FE m01FF=80            | Z=80 P=A0 SP=01FF
FC 00 40 | m4000=78,56                 | m01FF=78 m01FE=56 SP=01FD
FD 00 40 | X=01 A=10 P=21 m4001=01     | A=0F
FE 00 40 | X=01 m4001=01               | m4001=02
FF 10 05 | m0010=80                    | PC=2008
";

/// Decimal mode (NMOS 6502 rules, spec §M1.2), quad (`42 42`), flat (`EA`) and flat quad
/// (`42 42 EA`) forms; cycles here are the measured totals including prefix bytes (xemu's
/// MEGAcyc table), given explicitly as `=N`.
const PREFIXED_CASES: &str = "
69 01    | A=09 P=28                   | A=10 P=28 | =2
69 01    | A=99 P=28                   | A=00 P=A9 | =2
69 46    | A=58 P=29                   | A=05 P=E9 | =2
E9 01    | A=10 P=29                   | A=09 P=29 | =2
E9 01    | A=00 P=29                   | A=99 P=A8 | =2
E9 12    | A=46 P=29                   | A=34 P=29 | =2
42 42 AD 00 40 | A=80 m4000=78,56,34,12 | A=78 X=56 Y=34 Z=12 P=20 | =11
42 42 A5 10 | m0010=00,00,00,80         | A=00 X=00 Y=00 Z=80 P=A0 | =10
42 42 85 10 | A=81 X=02 Y=03 Z=04       | m0010=81,02,03,04 P=A0 | =9
42 42 8D 00 40 | A=01 X=02 Y=03 Z=04    | m4000=01,02,03,04 | =10
42 42 92 10 | A=01 X=02 Y=03 Z=04 m0010=00,40 | m4000=01,02,03,04 | =12
42 42 B2 10 | Z=02 m0010=00,40 m4002=11,22,33,44 | A=11 X=22 Y=33 Z=44 | =13
42 42 12 10 | A=01 Z=80 m0010=00,40 m4000=02,00,00,01 m4080=FF,FF,FF,FF | A=03 X=00 Y=00 Z=81 P=A0 | =14
42 42 6D 00 40 | A=FF X=FF Y=FF Z=FF m4000=01,00,00,00 P=20 | A=00 X=00 Y=00 Z=00 P=23 | =12
42 42 65 10 | A=FF X=FF Y=FF Z=7F m0010=01,00,00,00 P=20 | A=00 X=00 Y=00 Z=80 P=E0 | =11
42 42 ED 00 40 | A=00 X=00 Y=00 Z=00 m4000=01,00,00,00 P=21 | A=FF X=FF Y=FF Z=FF P=A0 | =12
42 42 C5 10 | A=05 X=00 Y=00 Z=01 m0010=05,00,00,01 | P=23 | =11
42 42 CD 00 40 | A=00 X=00 Y=00 Z=00 m4000=01,00,00,00 | P=A0 | =12
42 42 25 10 | A=FF X=0F Y=F0 Z=FF m0010=0F,FF,0F,00 | A=0F X=0F Y=00 Z=00 P=20 | =11
42 42 45 10 | A=FF X=00 Y=00 Z=00 m0010=FF,00,00,80 | A=00 Z=80 P=A0 | =11
42 42 24 10 | A=00 X=00 Y=00 Z=00 m0010=00,00,00,C0 | P=E2 | =11
42 42 0A    | A=00 X=00 Y=00 Z=80 P=20 | A=00 X=00 Y=00 Z=00 P=23 | =4
42 42 2A    | A=80 X=00 Y=00 Z=00 P=21 | A=01 X=01 Y=00 Z=00 P=20 | =4
42 42 4A    | A=00 X=00 Y=01 Z=00 P=20 | A=00 X=80 Y=00 Z=00 P=20 | =4
42 42 6A    | A=01 X=00 Y=00 Z=00 P=21 | A=00 X=00 Y=00 Z=80 P=A1 | =4
42 42 43    | A=00 X=00 Y=00 Z=80 P=20 | Z=C0 P=A0 | =4
42 42 1A    | A=FF X=FF Y=FF Z=FF      | A=00 X=00 Y=00 Z=00 P=22 | =4
42 42 3A    | A=00 X=00 Y=00 Z=00      | A=FF X=FF Y=FF Z=FF P=A0 | =4
42 42 E6 10 | m0010=FF,FF,00,00         | m0010=00,00,01,00 P=20 | =17
42 42 CE 00 40 | m4000=00,00,00,00      | m4000=FF,FF,FF,FF P=A0 | =18
42 42 46 10 | m0010=03,00,00,00 P=20   | m0010=01,00,00,00 P=21 | =17
42 42 56 10 | X=01 m0011=00,01,00,00    | m0011=80,00,00,00 | =17
42 42 0E 00 40 | m4000=00,00,00,80 P=20 | m4000=00,00,00,00 P=23 | =18
42 42 36 10 | X=02 P=21 m0012=00,00,00,00 | m0012=01,00,00,00 P=20 | =17
42 42 7E 00 40 | X=01 P=21 m4001=00,00,00,00 | m4001=00,00,00,80 P=A0 | =18
42 42 44 10 | m0010=00,00,00,80         | m0010=00,00,00,C0 P=A0 | =17
42 42 42 42 | A=05                        | A=05 PC=2002 | =2
EA B2 10 | Z=01 m0010=00,40,01,00       | A=5A P=20 | =13
EA 92 10 | Z=00 A=77 m0010=00,40,01,00  | | =9
EA 72 10 | Z=00 A=01 P=20 m0010=00,40,01,00 | A=5B | =14
42 42 EA B2 10 | Z=02 m0010=00,40,01,00 | A=11 X=22 Y=33 Z=00 | =16
42 42 EA 92 10 | A=0A X=0B Y=0C Z=0D m0010=00,60,01,00 | | =15
42 42 EA 12 10 | A=01 X=00 Y=00 Z=00 m0010=00,40,01,00 | A=5B X=5A Y=11 Z=22 | =17
";

#[derive(Default, Debug)]
struct State {
    regs: Vec<(String, u16)>,
    mem: Vec<(u16, Vec<u8>)>,
}

fn hex(s: &str) -> u16 {
    u16::from_str_radix(s, 16).unwrap_or_else(|_| panic!("bad hex {s:?}"))
}

fn parse_state(s: &str) -> State {
    let mut st = State::default();
    for tok in s.split_whitespace() {
        let (k, v) = tok
            .split_once('=')
            .unwrap_or_else(|| panic!("bad token {tok:?}"));
        if let Some(addr) = k.strip_prefix('m') {
            st.mem
                .push((hex(addr), v.split(',').map(|b| hex(b) as u8).collect()));
        } else {
            st.regs.push((k.to_string(), hex(v)));
        }
    }
    st
}

fn poke(m: &mut Machine, addr: u16, bytes: &[u8]) {
    for (i, &b) in bytes.iter().enumerate() {
        let p = m.cpu_to_phys_write(addr.wrapping_add(i as u16));
        m.poke_phys(p, &[b]);
    }
}

fn peek(m: &mut Machine, addr: u16) -> u8 {
    let p = m.cpu_to_phys_read(addr);
    m.peek_phys(p, 1)[0]
}

/// Runs one row; returns the opcode bytes (for coverage) and a failure message if any.
fn run_case(line: &str, cycles_from_table: bool) -> (Vec<u8>, Option<String>) {
    let parts: Vec<&str> = line.split('|').map(str::trim).collect();
    let code: Vec<u8> = parts[0].split_whitespace().map(|b| hex(b) as u8).collect();
    let setup = parse_state(parts[1]);
    let expect = parse_state(parts[2]);
    let mut m = Machine::new();
    m.p = 0x20;
    m.sp = 0x01FF;
    // Flat operands: physical $14000.. holds 5A 11 22 33 44 (the pointer bytes $00,$40,$01,$00).
    m.poke_phys(0x1_4000, &[0x5A, 0x5A, 0x11, 0x22, 0x33]);
    poke(&mut m, 0x2000, &code);
    for (k, v) in &setup.regs {
        let b = *v as u8;
        match k.as_str() {
            "A" => m.a = b,
            "X" => m.x = b,
            "Y" => m.y = b,
            "Z" => m.z = b,
            "B" => m.b = b,
            "P" => m.p = b,
            "SP" => m.sp = *v,
            _ => panic!("unknown register {k}"),
        }
    }
    for (a, bytes) in &setup.mem {
        poke(&mut m, *a, bytes);
    }
    m.pc = 0x2000;
    let c0 = m.cycles;
    m.step();
    let used = m.cycles - c0;
    let mut errors = Vec::new();
    let want_cycles = if let Some(extra) = parts.get(3) {
        if let Some(n) = extra.strip_prefix('=') {
            n.trim().parse().unwrap()
        } else {
            let base = if cycles_from_table {
                CYCLES_40MHZ[code[0] as usize]
            } else {
                0
            };
            base + extra.trim_start_matches('+').trim().parse::<u64>().unwrap()
        }
    } else {
        CYCLES_40MHZ[code[0] as usize]
    };
    if used != want_cycles {
        errors.push(format!("cycles {used}, expected {want_cycles}"));
    }
    let mut pc_checked = false;
    for (k, v) in &expect.regs {
        let got: u16 = match k.as_str() {
            "A" => m.a as u16,
            "X" => m.x as u16,
            "Y" => m.y as u16,
            "Z" => m.z as u16,
            "B" => m.b as u16,
            "P" => m.p as u16,
            "SP" => m.sp,
            "PC" => {
                pc_checked = true;
                m.pc
            }
            _ => panic!("unknown register {k}"),
        };
        if got != *v {
            errors.push(format!("{k}={got:X}, expected {v:X}"));
        }
    }
    if !pc_checked && m.pc != 0x2000 + code.len() as u16 {
        errors.push(format!(
            "PC={:04X}, expected {:04X}",
            m.pc,
            0x2000 + code.len()
        ));
    }
    for (a, bytes) in &expect.mem {
        for (i, &b) in bytes.iter().enumerate() {
            let got = peek(&mut m, a.wrapping_add(i as u16));
            if got != b {
                errors.push(format!("m{:04X}={got:02X}, expected {b:02X}", a + i as u16));
            }
        }
    }
    let msg = (!errors.is_empty()).then(|| format!("{line}\n    -> {}", errors.join(", ")));
    (code, msg)
}

fn run_table(table: &str, cycles_from_table: bool) -> (Vec<Vec<u8>>, Vec<String>) {
    let mut codes = Vec::new();
    let mut failures = Vec::new();
    for line in table.lines().filter(|l| !l.trim().is_empty()) {
        let (code, err) = run_case(line, cycles_from_table);
        codes.push(code);
        failures.extend(err);
    }
    (codes, failures)
}

#[test]
fn every_base_opcode_results_flags_and_cycles() {
    let (codes, failures) = run_table(BASE_CASES, true);
    let mut seen = [false; 256];
    for c in &codes {
        seen[c[0] as usize] = true;
    }
    let missing: Vec<String> = (0..256)
        .filter(|&o| !seen[o])
        .map(|o| format!("${o:02X}"))
        .collect();
    assert!(missing.is_empty(), "opcodes without a case: {missing:?}");
    assert!(
        failures.is_empty(),
        "{} failing cases:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn decimal_quad_and_flat_forms() {
    let (_, failures) = run_table(PREFIXED_CASES, false);
    assert!(
        failures.is_empty(),
        "{} failing cases:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn flat_store_reaches_28_bit_addresses() {
    let mut m = Machine::new();
    // STA [$10],Z with pointer $0FF80005 (colour RAM) and Z = 2; then $0FFD3020 (border colour).
    poke(&mut m, 0x2000, &[0xEA, 0x92, 0x10, 0xEA, 0x92, 0x14]);
    poke(
        &mut m,
        0x0010,
        &[0x05, 0x00, 0xF8, 0x0F, 0x1E, 0x30, 0xFD, 0xFF],
    );
    m.pc = 0x2000;
    m.a = 0x07;
    m.z = 2;
    m.step();
    m.step();
    assert_eq!(m.peek_phys(0xFF8_0007, 1), [7], "colour RAM cell 7");
    assert_eq!(
        m.peek_phys(0xFFD_3020, 1),
        [7],
        "bits 28-31 of the pointer are ignored"
    );
}

#[test]
fn map_eom_and_megabyte_selection() {
    let mut m = Machine::new();
    m.poke_phys(0x1_4000, &[0x11]);
    m.poke_phys(0x801_4000, &[0x22]);
    m.poke_phys(0x1_0000, &[0x33]);
    // MAP: X=$C1 A=$00 maps $4000-$7FFF (blocks 2,3) with offset $10000; Z=$30 Y=$80 maps
    // $8000-$BFFF with offset $08000.
    let prog = [
        0xA9, 0x00, 0xA2, 0xC1, 0xA0, 0x80, 0xA3, 0x30, 0x5C, // LDA LDX LDY LDZ MAP
        0xAD, 0x00, 0x40, 0x85, 0x20, // LDA $4000 : STA $20
        0xAD, 0x00, 0x80, 0x85, 0x21, // LDA $8000 : STA $21
        0xA9, 0x80, 0xA2, 0x0F, 0xA0, 0x00, 0xA3, 0x0F, 0x5C, // X=$0F, Z=$0F: MBs $80 / $00
        0xEA, // EOM
        0xAD, 0x00, 0x40, 0x85, 0x22, // LDA $4000 (now $8014000) : STA $22
    ];
    poke(&mut m, 0x2000, &prog);
    m.pc = 0x2000;
    for _ in 0..5 {
        m.step();
    }
    assert_eq!(m.cpu_to_phys_read(0x4000), 0x1_4000);
    assert_eq!(m.cpu_to_phys_read(0x9234), 0x1_1234);
    assert_eq!(
        m.cpu_to_phys_read(0x2000),
        0x2000,
        "blocks 0,1 stay unmapped"
    );
    for _ in 0..12 {
        m.step();
    }
    assert_eq!(m.peek_phys(0x20, 3), [0x11, 0x33, 0x22]);
    assert_eq!(m.cpu_to_phys_read(0x4000), 0x801_4000);
    assert_eq!(
        m.cpu_to_phys_read(0x8000),
        0x1_0000,
        "high half unchanged by the MB form"
    );
}

#[test]
fn map_blocks_interrupts_until_eom() {
    // CIA 1 timer A interrupts every 100 µs; the handler counts in $30. While MAP's latch is set,
    // no interrupt is taken even with I clear.
    let mut m = Machine::new();
    let main = [
        0xA9, 0x00, 0xAA, 0xA8, 0x4B, 0x5C, 0xEA, // all unmapped (MAP + EOM)
        0xA9, 0x64, 0x8D, 0x04, 0xDC, 0xA9, 0x00, 0x8D, 0x05, 0xDC, // latch 100
        0xA9, 0x81, 0x8D, 0x0D, 0xDC, // enable timer A interrupt
        0xA9, 0x11, 0x8D, 0x0E, 0xDC, // force load + start, continuous
        0x5C, // MAP again (same mapping): interrupts blocked
        0x58, // CLI
        0x80, 0xFE, // BRA * (blocked)
    ];
    poke(&mut m, 0x2000, &main);
    poke(&mut m, 0x3000, &[0xE6, 0x30, 0xAD, 0x0D, 0xDC, 0x40]); // INC $30 : LDA $DC0D : RTI
    m.poke_phys(0xFFFE, &[0x00, 0x30]);
    m.pc = 0x2000;
    m.p = 0x24;
    assert_eq!(m.run(405_000), StopReason::Budget); // 10 ms, still inside MAP
    assert_eq!(
        m.peek_phys(0x30, 1),
        [0],
        "no interrupt between MAP and EOM"
    );
    // EOM: replace the BRA with EOM + BRA.
    let bra_at = 0x2000 + main.len() as u16 - 2;
    poke(&mut m, bra_at, &[0xEA, 0x80, 0xFD]);
    m.pc = bra_at;
    assert_eq!(m.run(4_050_000), StopReason::Budget); // 100 ms at one interrupt per 101 µs
    let n = m.peek_phys(0x30, 1)[0] as u32 + 256 * 3; // the byte wraps: ~990 interrupts
    assert!((985..=995).contains(&n), "{n} interrupts in 100 ms");
}

#[test]
fn bsr_rts_and_16_bit_stack() {
    let mut m = Machine::new();
    // $2000: BSR $3000 ; INX.  $3000: INY ; RTS.
    poke(&mut m, 0x2000, &[0x63, 0xFE, 0x0F, 0xE8]);
    poke(&mut m, 0x3000, &[0xC8, 0x60]);
    m.pc = 0x2000;
    for _ in 0..4 {
        m.step();
    }
    assert_eq!((m.pc, m.x, m.y, m.sp), (0x2004, 1, 1, 0x01FF));
    // 16-bit stack (CLE): pushes cross from page 1 into page 0; with E set they wrap in page 1.
    let mut m = Machine::new();
    poke(&mut m, 0x2000, &[0x02, 0xA9, 0x5A, 0x48, 0x48, 0x03, 0x48]);
    m.pc = 0x2000;
    m.sp = 0x0100;
    for _ in 0..5 {
        m.step();
    }
    assert_eq!(
        m.sp, 0x00FE,
        "16-bit stack pointer decrements across the page"
    );
    assert_eq!(m.peek_phys(0x00FF, 2), [0x5A, 0x5A]);
    m.sp = 0x0100;
    m.step(); // PHA with E = 1 (SEE ran above)
    assert_eq!(m.sp, 0x01FF, "8-bit stack wraps inside page SPH");
}

#[test]
fn disassembler_names_prefixed_forms() {
    use ssnail_mega65::opcodes::disassemble;
    let cases: [(&[u8], u16, &str, usize); 12] = [
        (&[0xD3, 0xFC, 0x0F], 0x2002, "BNE $3000", 3), // the Book's 16-bit branch example
        (&[0x42, 0x42, 0xAD, 0x00, 0x40], 0x2000, "LDQ $4000", 5),
        (&[0xEA, 0xB2, 0x10], 0x2000, "LDA [$10],Z", 3),
        (&[0x42, 0x42, 0xEA, 0x92, 0x10], 0x2000, "STQ [$10]", 5),
        (&[0x42, 0x42, 0xEA, 0xB2, 0x10], 0x2000, "LDQ [$10],Z", 5),
        (&[0x42, 0x42, 0xB2, 0x10], 0x2000, "LDQ ($10),Z", 4),
        (&[0x42, 0x42, 0x12, 0x10], 0x2000, "ORQ ($10)", 4),
        (&[0x42, 0x42, 0x0A], 0x2000, "ASLQ", 3),
        (&[0x42, 0x42, 0x81, 0x10], 0x2000, "NEG A", 1), // reserved quad: just NEG
        (&[0x0F, 0x10, 0x05], 0x2000, "BBR0 $10,$2008", 3),
        (&[0xF4, 0x34, 0x12], 0x2000, "PHW #$1234", 3),
        (&[0xE2, 0x05], 0x2000, "LDA ($05,SP),Y", 2),
    ];
    for (bytes, pc, text, len) in cases {
        let mut b = bytes.to_vec();
        b.resize(8, 0);
        assert_eq!(disassemble(&b, pc), (text.to_string(), len), "{bytes:02X?}");
    }
}
