#include "scenarios/presentmon/refresh_fit.h"

#include <algorithm>
#include <cmath>
#include <cstdint>

namespace gpumodel {

RefreshFit fit_refresh(std::vector<double> screen) {
  RefreshFit f;
  std::sort(screen.begin(), screen.end());
  // Screen changes: two frames within 1 ms are one change (a frame and its tear).
  std::vector<double> t;
  for (double s : screen)
    if (t.empty() || s - t.back() > 1.0) t.push_back(s);
  std::vector<double> d;
  for (size_t i = 1; i < t.size(); ++i) d.push_back(t[i] - t[i - 1]);
  if (d.size() < 2) return f;
  std::vector<double> s = d;
  std::sort(s.begin(), s.end());
  double period = s[s.size() / 10], phase = t[0];
  std::vector<long> k(t.size()), prev;
  for (int round = 0; round < 32 && k != prev; ++round) {
    prev = k;
    k[0] = 0;
    for (size_t i = 1; i < t.size(); ++i) k[i] = k[i - 1] + std::max(1L, std::lround(d[i - 1] / period));
    double mk = 0, mt = 0;
    for (size_t i = 0; i < t.size(); ++i) mk += double(k[i]), mt += t[i];
    mk /= double(t.size()), mt /= double(t.size());
    double num = 0, den = 0;
    for (size_t i = 0; i < t.size(); ++i)
      num += (double(k[i]) - mk) * (t[i] - mt), den += (double(k[i]) - mk) * (double(k[i]) - mk);
    if (den <= 0) return f;
    period = num / den;
    phase = mt - period * mk;
  }
  f.period_ms = period;
  f.phase_ms = std::fmod(std::fmod(phase, period) + period, period);
  uint64_t fit = 0;
  for (double x : screen) {
    const double r = std::remainder(x - f.phase_ms, period);
    fit += std::fabs(r) < 0.5;
  }
  f.on_grid_pct = 100.0 * double(fit) / double(screen.size());
  return f;
}

}  // namespace gpumodel
