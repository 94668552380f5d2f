//! Virtual memory management (`hipMemCreate`, `hipMemAddressReserve`, `hipMemMap`,
//! `hipMemSetAccess`, ...).

/// One `hipMemMap` of a chunk range at a VA of a reservation.
#[derive(Debug)]
pub struct Mapping {}
