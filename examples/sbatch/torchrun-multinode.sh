#!/bin/bash
#SBATCH --job-name=llm-pretrain
#SBATCH --nodes=4
#SBATCH --ntasks-per-node=1          # one torchrun launcher per node
#SBATCH --gres=gpu:a100:8
#SBATCH --cpus-per-task=96
#SBATCH --mem=480G
#SBATCH --time=2-00:00:00
#SBATCH --partition=a100             # kept as spec.queueName

set -euo pipefail
MASTER_ADDR=$(scontrol show hostnames "$SLURM_JOB_NODELIST" | head -n 1)
MASTER_PORT=$(( 20000 + SLURM_JOB_ID % 10000 ))
export MASTER_ADDR MASTER_PORT

srun torchrun \
  --nnodes "$SLURM_NNODES" --nproc-per-node 8 \
  --rdzv-id "$SLURM_JOB_ID" --rdzv-backend c10d \
  --rdzv-endpoint "$MASTER_ADDR:$MASTER_PORT" \
  pretrain.py --config configs/7b.yaml
