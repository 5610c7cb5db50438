//! The headless MEGA65 (being written).
