# moat_freestanding_blob(EXE SRC BLOB_S MACRO): a freestanding static-pie
# executable EXE built from SRC (no libc), embedded into the moat binary by
# the assembler file BLOB_S (.incbin of the path given as the definition
# MACRO), as the library EXE's name with "-" -> "_" and "_blob" appended
# (moat-loader -> moat_loader_blob, alias moat::loader_blob). The loader
# and moat-reopen are built this way.
function(moat_freestanding_blob exe src blob_s macro)
  add_executable(${exe} ${src})
  set_target_properties(${exe} PROPERTIES
    RUNTIME_OUTPUT_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR}
    POSITION_INDEPENDENT_CODE OFF)
  # Options come after CMAKE_C_FLAGS(_<CONFIG>), so these win over -O/-g.
  target_compile_options(${exe} PRIVATE
    -Os -g0 -ffreestanding -fno-builtin -fno-stack-protector -fPIE
    -fvisibility=hidden -mgeneral-regs-only -fcf-protection=none
    -fno-asynchronous-unwind-tables -fno-unwind-tables
    -ffunction-sections -fdata-sections -fno-jump-tables
    -fno-sanitize=all -fno-profile-arcs -fno-test-coverage)
  target_link_options(${exe} PRIVATE
    -nostdlib -nostartfiles -static-pie -Wl,-e,_start -Wl,--gc-sections
    -Wl,--build-id=none -Wl,-z,noexecstack -Wl,-z,norelro
    -Wl,-z,noseparate-code -Wl,--hash-style=gnu -Wl,--no-eh-frame-hdr -s
    -fno-sanitize=all -fno-profile-arcs -fno-test-coverage)
  set(bin ${CMAKE_CURRENT_BINARY_DIR}/${exe})
  string(REPLACE "-" "_" lib ${exe})
  string(REPLACE "moat_" "" short ${lib})
  add_library(${lib}_blob STATIC ${blob_s})
  add_library(moat::${short}_blob ALIAS ${lib}_blob)
  add_dependencies(${lib}_blob ${exe})
  target_compile_definitions(${lib}_blob PRIVATE "${macro}=\"${bin}\"")
  set_source_files_properties(${blob_s} PROPERTIES OBJECT_DEPENDS ${bin})
endfunction()
