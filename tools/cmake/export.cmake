# `jager export`: Parquet pages are compressed with libzstd, pprof profiles are gzip'd with zlib.
find_package(PkgConfig REQUIRED)
pkg_check_modules(JAGER_EXPORT_ZSTD REQUIRED IMPORTED_TARGET libzstd)
pkg_check_modules(JAGER_EXPORT_ZLIB REQUIRED IMPORTED_TARGET zlib)
target_link_libraries(jager_cli PRIVATE PkgConfig::JAGER_EXPORT_ZSTD PkgConfig::JAGER_EXPORT_ZLIB)
