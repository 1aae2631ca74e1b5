# Runs at install time (install(CODE) in the top-level CMakeLists.txt), so
# that the paths written into the files are those of the prefix installed
# to, `cmake --install --prefix DIR` and CPack's /usr included: the systemd
# units' ExecStart and the ssh gate name the installed tools.
#
# In: CDC_CONTRIB (the source's contrib/), CDC_BINDIR and CDC_LIBEXECDIR
# (GNUInstallDirs, relative to the prefix or absolute).
foreach(var BINDIR LIBEXECDIR)
  if(IS_ABSOLUTE "${CDC_${var}}")
    set(full_${var} "${CDC_${var}}")
  else()
    set(full_${var} "${CMAKE_INSTALL_PREFIX}/${CDC_${var}}")
  endif()
endforeach()

function(cdc_install_text src dest_dir name mode)
  file(READ "${src}" text)
  string(REPLACE "/usr/local/bin/" "${full_BINDIR}/" text "${text}")
  string(REPLACE "bindir=/usr/local/bin" "bindir=${full_BINDIR}" text
                 "${text}")
  string(REPLACE "/usr/libexec/cdc/" "${full_LIBEXECDIR}/cdc/" text
                 "${text}")
  set(out "$ENV{DESTDIR}${dest_dir}/${name}")
  message(STATUS "Installing: ${out}")
  file(WRITE "${out}" "${text}")
  file(CHMOD "${out}" PERMISSIONS ${mode})
  list(APPEND CMAKE_INSTALL_MANIFEST_FILES "${out}")
  set(CMAKE_INSTALL_MANIFEST_FILES "${CMAKE_INSTALL_MANIFEST_FILES}"
      PARENT_SCOPE)
endfunction()

set(rw OWNER_READ OWNER_WRITE GROUP_READ WORLD_READ)
set(rwx ${rw} OWNER_EXECUTE GROUP_EXECUTE WORLD_EXECUTE)
file(GLOB units "${CDC_CONTRIB}/systemd/*.service"
     "${CDC_CONTRIB}/systemd/*.timer")
foreach(u IN LISTS units)
  get_filename_component(name "${u}" NAME)
  cdc_install_text("${u}" "${CMAKE_INSTALL_PREFIX}/lib/systemd/system"
                   "${name}" "${rw}")
endforeach()
cdc_install_text("${CDC_CONTRIB}/ssh/cdc-ssh-gate"
                 "${full_LIBEXECDIR}/cdc" "cdc-ssh-gate" "${rwx}")
