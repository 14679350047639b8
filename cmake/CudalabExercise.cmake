# Helpers that give every exercise the same targets, names and flags.
#
# For an exercise with slug S in chapter C (e.g. 01-reduce-scan-histogram) and
# each implementation I in CUDALAB_IMPLEMENTATIONS (solution, starter):
#   cudalab_S_I        static library built from solutions/C/S.cu or starter/C/S.cu
#   S_test_I           bin/S_test_I, the checker: tests/C/S_test.cu (compiled once) with a
#                      proxy of the exercise's API (tests/C/remote_api.cuh); it never
#                      links the student's code, and calls it in S_runner_I
#   S_runner_I         bin/S_runner_I, the runner: that library + the API's server; the
#                      checker starts it (cudalab/test/remote.hpp)
#   S_bench_I          bin/S_bench_I, a checker too: C/bench/S_bench.cu + its group's
#                      baselines (compiled once per group) + the proxy; it times the
#                      exercise's calls in S_runner_I (cudalab/bench.cuh)
# An exercise whose manifest entry has `uses = ["U", ...]` (earlier exercises whose
# functions it calls) links into S_runner_I the reference solution of each U, built
# from solutions/C/U.cu (cudalab_U_solution, or cudalab_U_reference when the
# solutions are not among the implementations built), so that S does not depend on
# the student's own U; where the course has no solutions/ (the student edition) it
# links the student's own, cudalab_U_I.
# and the chapter library cudalab_chNN_I holding every exercise of the chapter.
# The CTest test "C/S" runs the solution's tests.
# With CUDALAB_HIDDEN_TESTS_DIR set (the instructor's hidden tests, kept out of
# the students' repository), an exercise whose S_hidden_test.cu is in that
# folder (or its C/ subfolder) also gets S_hidden_test_I, linked like S_test_I.

set(CUDALAB_HIDDEN_TESTS_DIR "" CACHE PATH
    "Folder of the instructor's hidden test suites (<slug>_hidden_test.cu); empty: none")

# Warnings for every target; -Werror on code we own when CUDALAB_WERROR is on
# (student code, the starter, gets warnings but never -Werror).
function(cudalab_target_warnings target)
  cmake_parse_arguments(W "NO_WERROR" "" "" ${ARGN})
  set(host_flags -Wall -Wextra)
  if(CUDALAB_WERROR AND NOT W_NO_WERROR)
    list(APPEND host_flags -Werror)
    target_compile_options(${target} PRIVATE $<$<COMPILE_LANGUAGE:CUDA>:--Werror=all-warnings>)
  endif()
  list(JOIN host_flags "," host_csv)
  target_compile_options(${target} PRIVATE
    $<$<COMPILE_LANGUAGE:CXX>:${host_flags}>
    $<$<COMPILE_LANGUAGE:CUDA>:-Xcompiler=${host_csv}>
    $<$<COMPILE_LANGUAGE:CUDA>:-lineinfo>)
endfunction()

# cudalab_read_manifest(NUMBER 01)
# Reads the chapter's exercises.toml (beside the calling CMakeLists.txt): the
# slug of every [[exercise]], in order, and its group, the `group` key or else
# the topic of its `header` (include/cudalab/reduce.cuh: reduce), and its
# `uses` (a list of slugs on one line). Only the lines `slug = "..."`,
# `header = "..."`, `group = "..."` and `uses = [...]` of an [[exercise]]
# table are read (tools/cudalab_grade/manifest.py reads and checks the rest).
function(cudalab_read_manifest)
  cmake_parse_arguments(M "" "NUMBER" "" ${ARGN})
  set(manifest "${CMAKE_CURRENT_SOURCE_DIR}/exercises.toml")
  if(NOT EXISTS "${manifest}")
    message(FATAL_ERROR "cudalab: ${manifest} is missing: every chapter lists its exercises there")
  endif()
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS "${manifest}")
  file(STRINGS "${manifest}" lines REGEX "^(\\[|(slug|header|group|uses)[ \t]*=)")
  set(slugs "")
  set(groups "")
  set(in_exercise FALSE)
  # a sentinel table closes the last entry
  foreach(line IN LISTS lines ITEMS "[end]")
    if(line MATCHES "^\\[")
      if(in_exercise)
        if(NOT slug)
          message(FATAL_ERROR "cudalab: ${manifest}: an [[exercise]] entry without slug = \"...\"")
        endif()
        if(NOT group)
          get_filename_component(group "${header}" NAME_WE)
        endif()
        if(NOT group)
          message(FATAL_ERROR "cudalab: ${manifest}: exercise ${slug} has neither header nor group")
        endif()
        list(APPEND slugs "${slug}")
        list(APPEND groups "${group}")
        set_property(GLOBAL PROPERTY CUDALAB_CH${M_NUMBER}_USES_${slug} "${uses}")
      endif()
      set(in_exercise FALSE)
      if(line MATCHES "^\\[\\[exercise\\]\\]")
        set(in_exercise TRUE)
        set(slug "")
        set(header "")
        set(group "")
        set(uses "")
      endif()
    elseif(in_exercise AND line MATCHES "^(slug|header|group)[ \t]*=[ \t]*\"([^\"]*)\"")
      set(${CMAKE_MATCH_1} "${CMAKE_MATCH_2}")
    elseif(in_exercise AND line MATCHES "^uses[ \t]*=[ \t]*\\[([^]]*)\\]")
      string(REGEX MATCHALL "\"[a-z0-9_]+\"" quoted "${CMAKE_MATCH_1}")
      string(REPLACE "\"" "" uses "${quoted}")
    elseif(in_exercise AND line MATCHES "^uses[ \t]*=")
      message(FATAL_ERROR "cudalab: ${manifest}: write `uses = [\"slug\", ...]` on one line: ${line}")
    endif()
  endforeach()
  if(NOT slugs)
    message(FATAL_ERROR "cudalab: ${manifest} has no [[exercise]] with a slug")
  endif()
  set_property(GLOBAL PROPERTY CUDALAB_CH${M_NUMBER}_SLUGS "${slugs}")
  set_property(GLOBAL PROPERTY CUDALAB_CH${M_NUMBER}_GROUPS "${groups}")
  set_property(GLOBAL PROPERTY CUDALAB_CH${M_NUMBER}_ADDED "")
endfunction()

# At the end of a chapter's CMakeLists.txt: every exercise of the manifest is
# in a group that cudalab_add_exercises added.
function(cudalab_check_chapter number)
  get_property(slugs GLOBAL PROPERTY CUDALAB_CH${number}_SLUGS)
  get_property(groups GLOBAL PROPERTY CUDALAB_CH${number}_GROUPS)
  get_property(added GLOBAL PROPERTY CUDALAB_CH${number}_ADDED)
  foreach(slug group IN ZIP_LISTS slugs groups)
    if(NOT slug IN_LIST added)
      message(FATAL_ERROR "cudalab: exercise ${slug} of ${CMAKE_CURRENT_SOURCE_DIR}/exercises.toml is in "
                          "group '${group}' (its group key, or its header's topic), which no "
                          "cudalab_add_exercises(GROUP ${group} ...) of "
                          "${CMAKE_CURRENT_SOURCE_DIR}/CMakeLists.txt adds")
    endif()
  endforeach()
endfunction()

# cudalab_add_chapter(NUMBER 01)
# At the top of a chapter's CMakeLists.txt: creates the chapter's header
# target cudalab_chNN_headers (INTERFACE: its include/ and reference/ folders
# and cudalab::common; link another chapter's header target to it where the
# chapter uses that chapter's headers) and the chapter libraries
# cudalab_chNN_<impl>, and reads the chapter's manifest; then add the
# exercises in groups that share a baseline file with cudalab_add_exercises.
function(cudalab_add_chapter)
  cmake_parse_arguments(C "" "NUMBER" "" ${ARGN})
  if(C_UNPARSED_ARGUMENTS OR NOT C_NUMBER)
    message(FATAL_ERROR "cudalab_add_chapter(${ARGN}): call it as cudalab_add_chapter(NUMBER <two digits>)")
  endif()
  set(C_HEADERS cudalab_ch${C_NUMBER}_headers)
  add_library(${C_HEADERS} INTERFACE)
  target_include_directories(${C_HEADERS} INTERFACE
    ${CMAKE_CURRENT_SOURCE_DIR}/include ${CMAKE_CURRENT_SOURCE_DIR}/reference)
  target_link_libraries(${C_HEADERS} INTERFACE cudalab::common)
  set_property(DIRECTORY PROPERTY CUDALAB_CHAPTER_NUMBER "${C_NUMBER}")
  set_property(GLOBAL PROPERTY CUDALAB_CH${C_NUMBER}_HEADERS "${C_HEADERS}")
  cudalab_read_manifest(NUMBER ${C_NUMBER})
  # (EVAL: a deferred call reads its arguments' variables when it runs; the number is needed now)
  cmake_language(EVAL CODE "cmake_language(DEFER CALL cudalab_check_chapter [[${C_NUMBER}]])")
  foreach(impl IN LISTS CUDALAB_IMPLEMENTATIONS)
    add_library(cudalab_ch${C_NUMBER}_${impl} STATIC)
    target_link_libraries(cudalab_ch${C_NUMBER}_${impl} PUBLIC ${C_HEADERS})
  endforeach()
endfunction()

# cudalab_given_library(<out var> <used slug> <chapter> <impl> <headers>)
# The OBJECT library whose objects an exercise that uses <used slug> links in
# its runner of implementation <impl>: the reference solution's (cudalab_U_solution
# when the solutions are built, else cudalab_U_reference, made here once from
# solutions/<chapter>/U.cu), or the student's own (cudalab_U_<impl>) where the
# course has no solutions/ (the student edition). tools/cudalab_grade/grading.py
# (given_implementation) tells the student which, by the same rule.
function(cudalab_given_library out used chapter impl headers)
  set(reference "${PROJECT_SOURCE_DIR}/solutions/${chapter}/${used}.cu")
  if("solution" IN_LIST CUDALAB_IMPLEMENTATIONS)
    set(${out} cudalab_${used}_solution PARENT_SCOPE)
  elseif(EXISTS "${reference}")
    if(NOT TARGET cudalab_${used}_reference)
      add_library(cudalab_${used}_reference OBJECT "${reference}")
      target_link_libraries(cudalab_${used}_reference PUBLIC ${headers})
      cudalab_target_warnings(cudalab_${used}_reference)
    endif()
    set(${out} cudalab_${used}_reference PARENT_SCOPE)
  else()
    set(${out} cudalab_${used}_${impl} PARENT_SCOPE)
  endif()
endfunction()

# cudalab_add_exercises(GROUP <name> [BASELINES <bench sources>])
# After cudalab_add_chapter, in the same CMakeLists.txt (its NUMBER is the
# chapter's). One group of exercises of a chapter (e.g. the sums, the scans): the
# manifest's exercises whose group is <name> (cudalab_read_manifest), in the
# manifest's order. Each exercise's benchmark program links the group's
# baselines, so a run measures the exercise beside exactly the baselines it is
# judged against. BASELINES may name several sources, all compiled once per
# group into that one object library: the baselines file and the group's
# checks file (bench/<group>_checks.cu, the Thrust checks its bench header
# declares, so that no exercise's benchmark object compiles Thrust).
function(cudalab_add_exercises)
  cmake_parse_arguments(C "" "GROUP" "BASELINES" ${ARGN})
  if(C_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "cudalab_add_exercises(GROUP ${C_GROUP}): unexpected ${C_UNPARSED_ARGUMENTS} "
                        "(the exercises come from the chapter's exercises.toml)")
  endif()
  get_filename_component(chapter "${CMAKE_CURRENT_SOURCE_DIR}" NAME)
  get_property(C_NUMBER DIRECTORY PROPERTY CUDALAB_CHAPTER_NUMBER)
  if(NOT C_NUMBER)
    message(FATAL_ERROR "cudalab_add_exercises(GROUP ${C_GROUP}): call cudalab_add_chapter first")
  endif()
  get_property(C_HEADERS GLOBAL PROPERTY CUDALAB_CH${C_NUMBER}_HEADERS)
  set(root "${PROJECT_SOURCE_DIR}")
  set(baselines cudalab_ch${C_NUMBER}_${C_GROUP}_baselines)

  get_property(all_slugs GLOBAL PROPERTY CUDALAB_CH${C_NUMBER}_SLUGS)
  get_property(all_groups GLOBAL PROPERTY CUDALAB_CH${C_NUMBER}_GROUPS)
  set(C_EXERCISES "")
  foreach(slug group IN ZIP_LISTS all_slugs all_groups)
    if(group STREQUAL C_GROUP)
      list(APPEND C_EXERCISES "${slug}")
    endif()
  endforeach()
  if(NOT C_EXERCISES)
    message(FATAL_ERROR "cudalab_add_exercises(GROUP ${C_GROUP}): no exercise of "
                        "${CMAKE_CURRENT_SOURCE_DIR}/exercises.toml is in this group (its group key, "
                        "or its header's topic)")
  endif()
  set_property(GLOBAL APPEND PROPERTY CUDALAB_CH${C_NUMBER}_ADDED ${C_EXERCISES})
  # Every file of every exercise, before any target: a missing one is named here.
  foreach(slug IN LISTS C_EXERCISES)
    set(needed "")
    foreach(impl IN LISTS CUDALAB_IMPLEMENTATIONS)
      set(top starter)
      if(impl STREQUAL "solution")
        set(top solutions)
      endif()
      list(APPEND needed "${root}/${top}/${chapter}/${slug}.cu")
    endforeach()
    if(CUDALAB_BUILD_TESTS)
      list(APPEND needed "${root}/tests/${chapter}/${slug}_test.cu")
    endif()
    if(CUDALAB_BUILD_BENCHMARKS)
      list(APPEND needed "${CMAKE_CURRENT_SOURCE_DIR}/bench/${slug}_bench.cu")
    endif()
    foreach(file IN LISTS needed)
      if(NOT EXISTS "${file}")
        message(FATAL_ERROR "cudalab: exercise ${slug} of ${CMAKE_CURRENT_SOURCE_DIR}/exercises.toml "
                            "has no ${file} (a solution is written by hand; tools/make-starter "
                            "writes the starter)")
      endif()
    endforeach()
  endforeach()

  if(CUDALAB_BUILD_BENCHMARKS AND C_BASELINES)
    add_library(${baselines} OBJECT ${C_BASELINES})
    target_link_libraries(${baselines} PRIVATE ${C_HEADERS} cudalab::bench)
    cudalab_target_warnings(${baselines})
  endif()

  foreach(slug IN LISTS C_EXERCISES)
    if(CUDALAB_BUILD_TESTS)
      add_library(${slug}_test_obj OBJECT "${root}/tests/${chapter}/${slug}_test.cu")
      target_link_libraries(${slug}_test_obj PRIVATE ${C_HEADERS} cudalab::test)
      cudalab_target_warnings(${slug}_test_obj)
      # The two halves of the remote API: proxies (checker) and server (runner).
      foreach(half proxy serve)
        add_library(${slug}_remote_${half} OBJECT "${root}/tests/common/remote_${half}.cu")
        target_link_libraries(${slug}_remote_${half} PRIVATE ${C_HEADERS} cudalab::test)
        target_include_directories(${slug}_remote_${half} PRIVATE "${root}/tests/${chapter}")
        target_compile_definitions(${slug}_remote_${half} PRIVATE CUDALAB_REMOTE_LIST=CUDALAB_REMOTE_${slug})
        cudalab_target_warnings(${slug}_remote_${half})
      endforeach()
      set(hidden "")
      if(CUDALAB_HIDDEN_TESTS_DIR)
        foreach(candidate "${CUDALAB_HIDDEN_TESTS_DIR}/${chapter}/${slug}_hidden_test.cu"
                          "${CUDALAB_HIDDEN_TESTS_DIR}/${slug}_hidden_test.cu")
          if(NOT hidden AND EXISTS "${candidate}")
            set(hidden "${candidate}")
          endif()
        endforeach()
      endif()
      if(hidden)
        add_library(${slug}_hidden_test_obj OBJECT "${hidden}")
        target_link_libraries(${slug}_hidden_test_obj PRIVATE ${C_HEADERS} cudalab::test)
        target_include_directories(${slug}_hidden_test_obj PRIVATE "${root}/tests/${chapter}")
        cudalab_target_warnings(${slug}_hidden_test_obj NO_WERROR)
      endif()
    endif()
    if(CUDALAB_BUILD_BENCHMARKS)
      add_library(${slug}_bench_obj OBJECT "${CMAKE_CURRENT_SOURCE_DIR}/bench/${slug}_bench.cu")
      target_link_libraries(${slug}_bench_obj PRIVATE ${C_HEADERS} cudalab::bench)
      cudalab_target_warnings(${slug}_bench_obj)
    endif()

    foreach(impl IN LISTS CUDALAB_IMPLEMENTATIONS)
      if(impl STREQUAL "solution")
        set(src "${root}/solutions/${chapter}/${slug}.cu")
        set(werror "")
      else()
        set(src "${root}/starter/${chapter}/${slug}.cu")
        set(werror NO_WERROR)
      endif()
      set(lib cudalab_${slug}_${impl})
      add_library(${lib} OBJECT "${src}")
      target_link_libraries(${lib} PUBLIC ${C_HEADERS})
      # <cub/cub.cuh> (and every device-wide CUB or Thrust header) brings CCCL's NVTX ranges,
      # whose header-only loader imports dlopen/dlsym/dlclose and defines extern "C"
      # nvtx*_impl_init functions: both refused by the object check (objcheck.py), whatever
      # the student wrote. No exercise needs NVTX ranges.
      target_compile_definitions(${lib} PRIVATE CCCL_DISABLE_NVTX)
      cudalab_target_warnings(${lib} ${werror})
      if(impl STREQUAL "starter")
        # Unfinished code declares what the student has yet to use: parameters,
        # variables, helper functions and kernels. No warning about them in the
        # starter, so that it needs no (void) casts or dead calls: nvcc's 177
        # ("declared but never referenced", variables and functions) and 550
        # ("set but never used"), and the host compiler's -Wunused-*.
        # The solution keeps every warning.
        set(quiet -Wno-unused-parameter -Wno-unused-variable -Wno-unused-function
                  -Wno-unused-but-set-variable -Wno-unused-but-set-parameter)
        list(JOIN quiet "," quiet_csv)
        target_compile_options(${lib} PRIVATE
          $<$<COMPILE_LANGUAGE:CXX>:${quiet}>
          $<$<COMPILE_LANGUAGE:CUDA>:-diag-suppress=177,550 -Xcompiler=${quiet_csv}>)
      endif()
      target_sources(cudalab_ch${C_NUMBER}_${impl} PRIVATE $<TARGET_OBJECTS:${lib}>)

      if(CUDALAB_BUILD_TESTS)
        add_executable(${slug}_test_${impl}
          $<TARGET_OBJECTS:${slug}_test_obj> $<TARGET_OBJECTS:${slug}_remote_proxy>)
        target_link_libraries(${slug}_test_${impl} PRIVATE cudalab::test_main cudalab::remote_checker)
        set_target_properties(${slug}_test_${impl} PROPERTIES LINKER_LANGUAGE CUDA)
        add_dependencies(${slug}_test_${impl} ${slug}_runner_${impl})
        set(given_objects "")
        get_property(uses GLOBAL PROPERTY CUDALAB_CH${C_NUMBER}_USES_${slug})
        foreach(used IN LISTS uses)
          cudalab_given_library(given "${used}" "${chapter}" "${impl}" "${C_HEADERS}")
          list(APPEND given_objects $<TARGET_OBJECTS:${given}>)
        endforeach()
        add_executable(${slug}_runner_${impl}
          $<TARGET_OBJECTS:${lib}> ${given_objects} $<TARGET_OBJECTS:${slug}_remote_serve>
          $<TARGET_OBJECTS:cudalab_remote_runner>)
        target_link_libraries(${slug}_runner_${impl} PRIVATE ${C_HEADERS} cudalab::common)
        target_link_options(${slug}_runner_${impl} PRIVATE ${CUDALAB_RUNNER_LINK_OPTIONS})
        set_target_properties(${slug}_runner_${impl} PROPERTIES LINKER_LANGUAGE CUDA)
        if(impl STREQUAL "solution")
          add_test(NAME "${chapter}/${slug}" COMMAND ${slug}_test_solution)
          # Skipped, not passed, where the program found no GPU (tests/common/gtest_main.cu
          # prints the line; with CUDALAB_REQUIRE_GPU=1 it fails instead) and its output ends
          # with gtest's list of skipped tests: a failure would be listed after it.
          set_tests_properties("${chapter}/${slug}" PROPERTIES LABELS "exercise;gpu" TIMEOUT 900
            SKIP_REGULAR_EXPRESSION "cudalab: no CUDA device. GPU tests are skipped\n.*\\[  SKIPPED \\] [^\n]*\n$")
        endif()
        if(hidden)
          add_executable(${slug}_hidden_test_${impl}
            $<TARGET_OBJECTS:${slug}_hidden_test_obj> $<TARGET_OBJECTS:${slug}_remote_proxy>)
          target_link_libraries(${slug}_hidden_test_${impl} PRIVATE cudalab::test_main
                                cudalab::remote_checker)
          add_dependencies(${slug}_hidden_test_${impl} ${slug}_runner_${impl})
          set_target_properties(${slug}_hidden_test_${impl} PROPERTIES LINKER_LANGUAGE CUDA)
        endif()
      endif()
      if(CUDALAB_BUILD_BENCHMARKS)
        # A checker too: the exercise's calls go to S_runner_I through the
        # proxy, timed by this program; the baselines run here.
        set(objs $<TARGET_OBJECTS:${slug}_bench_obj> $<TARGET_OBJECTS:${slug}_remote_proxy>)
        if(C_BASELINES)
          list(APPEND objs $<TARGET_OBJECTS:${baselines}>)
        endif()
        add_executable(${slug}_bench_${impl} ${objs})
        target_link_libraries(${slug}_bench_${impl} PRIVATE cudalab::bench_main cudalab::remote_checker)
        set_target_properties(${slug}_bench_${impl} PROPERTIES LINKER_LANGUAGE CUDA)
        add_dependencies(${slug}_bench_${impl} ${slug}_runner_${impl})
      endif()
    endforeach()
  endforeach()
endfunction()
