//! MAP and EOM (spec §M1.5): the CPU's 64 KB view over the 28-bit address space.

use crate::machine::Machine;

impl Machine {
    /// MAP (spec §M1.5): X/A program the low half, Z/Y the high half; X = $0F / Z = $0F select the
    /// megabyte instead. Blocks interrupts until EOM.
    pub(super) fn exec_map(&mut self) {
        if self.x == 0x0F {
            self.map.lo_mb = self.a;
        } else {
            self.map.lo_offset = ((self.x as u32 & 0x0F) << 16) | (self.a as u32) << 8;
            self.map.mask = (self.map.mask & 0xF0) | (self.x >> 4);
        }
        if self.z == 0x0F {
            self.map.hi_mb = self.y;
        } else {
            self.map.hi_offset = ((self.z as u32 & 0x0F) << 16) | (self.y as u32) << 8;
            self.map.mask = (self.map.mask & 0x0F) | (self.z & 0xF0);
        }
        self.map_inhibit = true;
        self.rebuild_view();
    }
}
