"""What several commands read and show: cluster reads, a job followed over time, the job view,
the GPU node table and the SKU catalog."""
