//! The SSNAIL core emulator (being written).
