# cudalab_choose_cuda_architectures()
#
# Sets CMAKE_CUDA_ARCHITECTURES before project() when the caller has not:
# the compute capability of the local GPU(s) as nvidia-smi reports it, or
# 90 (Hopper, sm_90) on a machine without a GPU, such as CI.
function(cudalab_choose_cuda_architectures)
  if(DEFINED CMAKE_CUDA_ARCHITECTURES AND NOT CMAKE_CUDA_ARCHITECTURES STREQUAL "")
    return()
  endif()
  if(DEFINED ENV{CUDAARCHS})
    return()  # CMake reads this variable itself
  endif()
  set(archs "")
  find_program(_cudalab_nvidia_smi nvidia-smi)
  if(_cudalab_nvidia_smi)
    execute_process(
      COMMAND ${_cudalab_nvidia_smi} --query-gpu=compute_cap --format=csv,noheader
      OUTPUT_VARIABLE caps RESULT_VARIABLE rc ERROR_QUIET
      TIMEOUT 20)
    if(rc EQUAL 0)
      string(REPLACE "\n" ";" caps "${caps}")
      foreach(cap IN LISTS caps)
        string(STRIP "${cap}" cap)
        if(cap MATCHES "^([0-9]+)\\.([0-9]+)$")
          list(APPEND archs "${CMAKE_MATCH_1}${CMAKE_MATCH_2}")
        endif()
      endforeach()
      list(REMOVE_DUPLICATES archs)
    endif()
  endif()
  if(archs)
    message(STATUS "cudalab: CUDA architectures of the local GPU(s): ${archs}")
  else()
    set(archs 90)
    message(STATUS "cudalab: no GPU found, building for sm_90")
  endif()
  set(CMAKE_CUDA_ARCHITECTURES "${archs}" CACHE STRING "CUDA architectures to build for")
endfunction()
