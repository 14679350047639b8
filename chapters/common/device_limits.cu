// The cached, profiled device limits of cudalab/device.cuh, compiled once and
// linked into every program (cudalab::common), so that an exercise's object
// calls them rather than holding their getenv and lock itself.
#include <mutex>
#include <string>
#include <vector>

#include "cudalab/device.cuh"

namespace cudalab {

DeviceLimits device_limits() {
  int dev = 0;
  CUDALAB_CHECK(cudaGetDevice(&dev));
  const std::string profile = device_profile_env();
  struct Entry {
    int device;
    std::string profile;
    DeviceLimits limits;
  };
  static std::mutex mutex;
  static std::vector<Entry> cache;
  {
    std::lock_guard<std::mutex> lock(mutex);
    for (const Entry& e : cache) {
      if (e.device == dev && e.profile == profile) return e.limits;
    }
  }
  const DeviceLimits limits = device_limits_for(dev, profile);
  std::lock_guard<std::mutex> lock(mutex);
  cache.push_back({dev, profile, limits});
  return limits;
}

DeviceLimits real_device_limits() {
  int dev = 0;
  CUDALAB_CHECK(cudaGetDevice(&dev));
  static std::mutex mutex;
  static std::vector<DeviceLimits> cache;
  std::lock_guard<std::mutex> lock(mutex);
  for (const DeviceLimits& l : cache) {
    if (l.device == dev) return l;
  }
  cache.push_back(real_device_limits(dev));
  return cache.back();
}

}  // namespace cudalab
