// PhiHub's errors conform to PhiFormats' UserFacingError; re-export it so callers of PhiHub
// see the protocol without importing PhiFormats themselves.
@_exported import PhiFormats
