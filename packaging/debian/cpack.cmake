# The .deb: `cpack -G DEB` in a build directory writes cdc_VERSION_ARCH.deb.
# Installed under /usr (tools in /usr/bin, units in /usr/lib/systemd/system
# naming them, the ssh gate in /usr/libexec/cdc); postinst creates the
# system user cdc (home /var/lib/cdc, where the log lives). Removing or
# purging the package leaves /var/lib/cdc and the user as they are: they
# hold data no package may take away. tests/e2e/package_test.sh builds,
# installs, uses and removes it.
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME cdc)
set(CPACK_PACKAGE_VENDOR "cdc")
set(CPACK_PACKAGE_CONTACT
    "cdc maintainers <maintainers@users.noreply.a-seed-44e6cd57.example>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
    "change data capture from PostgreSQL into a local event log")
set(CPACK_DEBIAN_PACKAGE_DESCRIPTION
    "cdc-capture reads PostgreSQL logical replication (pgoutput) and writes
every committed change, transaction-atomically and durably, into a local
segmented event log; cdc-tail, cdc-ack, cdc-run, cdc-redis, cdc-nats,
cdc-backup and cdc-log read, acknowledge, apply, back up and inspect it.")
set(CPACK_DEBIAN_PACKAGE_SECTION database)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_DEPENDS "adduser")
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_STRIP_FILES ON)
set(CPACK_RESOURCE_FILE_LICENSE "${CMAKE_SOURCE_DIR}/LICENSE")
set(CPACK_DEBIAN_PACKAGE_CONTROL_EXTRA
    "${CMAKE_SOURCE_DIR}/packaging/debian/postinst;${CMAKE_SOURCE_DIR}/packaging/debian/prerm;${CMAKE_SOURCE_DIR}/packaging/debian/postrm")
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION TRUE)
include(CPack)
