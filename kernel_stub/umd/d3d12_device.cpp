#include "kernel_stub/umd/d3d12_device.h"

namespace gpumodel {

D3D12Device D3D12CreateDevice(const VidSch& adapter, const D3D12UmdCaps& umd, const std::string& name) {
  D3D12Device d;
  d.kernel_tier = adapter.D3DKMTQueryAdapterInfoCrossAdapterResourceSupport().support_tier;
  if (umd.cross_adapter_row_major_texture_supported && d.kernel_tier < 2) {
    d.reason = name +
               ": D3D12CreateDevice failed: the UMD reports CrossAdapterRowMajorTextureSupported but the kernel "
               "driver's tier is " +
               std::to_string(d.kernel_tier) + " (no CrossAdapterResourceTexture; CASO support, tier 2)";
    return d;
  }
  d.created = true;
  return d;
}

}  // namespace gpumodel
